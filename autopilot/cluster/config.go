package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
)

// ValidateConfigs checks a task's config files as `ralph loop` checks
// local ones (an unknown key is refused, with its file and line).
func ValidateConfigs(files []ConfigFile) error {
	_, err := loadConfigs(files)
	return err
}

// checkRelativeCommands refuses a backend command given by a relative
// path: on the coordinator it named a file beside its config, which the
// worker does not have. It matters only to a worker that runs the task's
// backend.
func checkRelativeCommands(files []ConfigFile) error {
	cfg, err := loadConfigs(files)
	if err != nil {
		return err
	}
	if rel := cfg.RelativeCommands(); len(rel) > 0 {
		return fmt.Errorf("the backend command %s is a path relative to the coordinator's config, which a worker cannot follow: "+
			"name a command on the workers' PATH (claude) or an absolute path that exists on every worker", strings.Join(rel, ", "))
	}
	return nil
}

func loadConfigs(files []ConfigFile) (*config.Config, error) {
	if len(files) == 0 {
		return nil, errors.New("no config file")
	}
	return config.LoadLayers(layers(files)...)
}

func layers(files []ConfigFile) []config.Layer {
	out := make([]config.Layer, len(files))
	for i, f := range files {
		out[i] = config.Layer{Name: f.Name, Data: f.Data}
	}
	return out
}

// taskConfigs are the config files t's loop gets from the task. A worker
// that trusts task commands takes them as sent, and adds the task's own
// commands to the acceptance criteria. One that does not takes them as
// one file without anything that would run a command here (see
// config.WithoutCommands), drops the task's own commands too, and logs
// what it dropped.
func (w *Worker) taskConfigs(t Task) ([]ConfigFile, error) {
	if w.opts.TrustTaskCommands {
		if err := checkRelativeCommands(t.Configs); err != nil {
			return nil, fmt.Errorf("invalid config: %w", err)
		}
		files, err := w.withoutSandbox(t)
		if err != nil {
			return nil, err
		}
		if len(t.TaskCommands) > 0 {
			overlay, err := taskCommandsOverlay(t)
			if err != nil {
				return nil, err
			}
			files = append(files, ConfigFile{Name: "task-commands.yml", Data: overlay})
		}
		return files, nil
	}
	data, dropped, err := config.WithoutCommands(layers(t.Configs)...)
	if err != nil {
		return nil, fmt.Errorf("task %s's config: %w", t.ID, err)
	}
	for _, c := range t.TaskCommands {
		dropped = append(dropped, "the task's acceptance command "+strconv.Quote(c.Command))
	}
	if len(dropped) > 0 {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: runs without what it would run on this machine, which does not trust task commands (--trust-task-commands): %s",
			t.ID, strings.Join(dropped, "; "))
	}
	head := "# Written by ralph worker for task " + t.ID + ": its config, without what would run a command here.\n"
	return []ConfigFile{{Name: "task.yml", Data: append([]byte(head), data...)}}, nil
}

// withoutSandbox is t's config files without their sandbox: sections: only
// the worker's owner says how its loops' agents are confined, even when
// the worker trusts the task's commands (see config.WithoutSandbox).
func (w *Worker) withoutSandbox(t Task) ([]ConfigFile, error) {
	out, dropped, err := config.WithoutSandbox(layers(t.Configs)...)
	if err != nil {
		return nil, fmt.Errorf("task %s's config: %w", t.ID, err)
	}
	if len(dropped) > 0 {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: its config's sandbox is not this worker's to follow, dropped: %s",
			t.ID, strings.Join(dropped, "; "))
	}
	files := make([]ConfigFile, len(out))
	for i, l := range out {
		files[i] = ConfigFile{Name: l.Name, Data: l.Data}
	}
	return files, nil
}

// backendOverlay is a config file that names the agent CLI the loops run.
func backendOverlay(name string) []byte {
	body, err := yaml.Marshal(map[string]any{"cli": map[string]string{"backend": name}})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return append([]byte("# Written by ralph worker: its --backend.\n"), body...)
}

// sandboxOverlay is a config file that confines the loops' agents as the
// worker's owner says, over every other file.
func sandboxOverlay(s config.Sandbox) []byte {
	body, err := yaml.Marshal(map[string]any{"sandbox": autopilot.SandboxOverlay(s)})
	if err != nil {
		panic(err) // strings and lists of strings always marshal
	}
	return append([]byte("# Written by ralph worker: how its loops' agents are confined.\n"), body...)
}

// taskCommandsOverlay is a config file that gives t's loop the acceptance
// criteria of its config files followed by the task's own commands: a
// later file's acceptance_criteria replace an earlier one's.
func taskCommandsOverlay(t Task) ([]byte, error) {
	cfg, err := loadConfigs(t.Configs)
	if err != nil {
		return nil, err
	}
	specs := append([]criteria.Spec{}, cfg.AcceptanceCriteria...)
	for _, c := range t.TaskCommands {
		specs = append(specs, criteria.Spec{Type: criteria.TypeCommandSucceeds, Command: c.Command, Name: c.Name})
	}
	body, err := yaml.Marshal(map[string]any{"acceptance_criteria": specs})
	if err != nil {
		return nil, err
	}
	head := "# Written by ralph worker for task " + t.ID + ": its config's acceptance criteria and the task's own commands.\n"
	return append([]byte(head), body...), nil
}
