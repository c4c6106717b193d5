package autopilot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/tasks"
)

// Agent is the backend and model a task names for its loop ("" each: the
// config's). Its loop gets them as `ralph loop --backend` and --model, which
// change cli: and leave a hat with a backend: of its own as it is: hat >
// task > cli.
type Agent struct {
	Backend string `json:"backend,omitempty"`
	Model   string `json:"model,omitempty"`
}

// IsZero reports whether the task names no agent.
func (a Agent) IsZero() bool { return a == Agent{} }

// String is how the dry run and the logs say it: "backend claude, model
// opus", or the half that is set.
func (a Agent) String() string {
	var parts []string
	if a.Backend != "" {
		parts = append(parts, "backend "+a.Backend)
	}
	if a.Model != "" {
		parts = append(parts, "model "+a.Model)
	}
	return strings.Join(parts, ", ")
}

// Flags are `ralph loop`'s flags that run with the agent: --backend and
// --model, which change cli: (see `ralph loop --help`).
func (a Agent) Flags() []string {
	var out []string
	if a.Backend != "" {
		out = append(out, "--backend", a.Backend)
	}
	if a.Model != "" {
		out = append(out, "--model", a.Model)
	}
	return out
}

// TaskAgent is the agent t names, or why it cannot be used (see
// CheckAgent): the task fails, not the run.
func TaskAgent(t tasks.Task) (Agent, error) {
	a := Agent{Backend: t.Backend, Model: t.Model}
	if err := t.CheckAgent(); err != nil {
		return Agent{}, err
	}
	return a, CheckAgent(t.ID, a)
}

// CheckAgent says what is wrong with the agent that task names, nil when
// nothing is: the backend must be an agent CLI ralph knows, the model a
// plain name (tasks.ValidModel). A task comes from whoever can write to the
// tracker, or from the network (a cluster's worker checks it again), so
// neither may reach a command line unchecked.
func CheckAgent(task string, a Agent) error {
	if a.Backend != "" && !slices.Contains(config.AgentNames(), a.Backend) {
		return fmt.Errorf("task %s names backend %q, which is not an agent CLI ralph knows: name one of %s, or none to use the config's",
			task, a.Backend, strings.Join(config.AgentNames(), ", "))
	}
	if a.Model != "" {
		if err := tasks.ValidModel(a.Model); err != nil {
			return fmt.Errorf("task %s: %w", task, err)
		}
	}
	return nil
}
