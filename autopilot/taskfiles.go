package autopilot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// Each task's loop reads its objective and a config overlay from
// .ralph/autopilot/<task>/ in the repository, and writes its output there:
// outside the worktree, so none of it can be committed with the task's
// work.
// (runfiles.ObjectiveFile, runfiles.OverlayFile, runfiles.OutputFile, and
// runfiles.CommandsFile, which holds the task's trusted acceptance commands
// apart from the overlay's criteria, for runners that must tell them apart.)

func (a *Autopilot) taskDir(task string) string {
	return filepath.Join(a.journal.dir, runfiles.TasksDir, task)
}

// job is the loop of task's attempt.
func (a *Autopilot) job(task string, attempt int, mode runfiles.StartMode) (Job, error) {
	dir := a.taskDir(task)
	job := Job{Run: a.state().RunID, Task: task, Attempt: attempt, Dir: a.worktree(task), Mode: mode,
		Configs: a.opts.Configs, Overlay: filepath.Join(dir, runfiles.OverlayFile),
		ObjectiveFile: filepath.Join(dir, runfiles.ObjectiveFile), Output: filepath.Join(dir, runfiles.OutputFile)}
	err := readJobFiles(dir, &job)
	return job, err
}

// readJobFiles reads into job what the task files in dir say of its
// loop besides its paths. Task files of an earlier version of ralph have
// neither file: no command is trusted, and the loop runs with the
// config's agent.
func readJobFiles(dir string, job *Job) error {
	if err := readTaskFile(filepath.Join(dir, runfiles.CommandsFile), &job.TaskCommands); err != nil {
		return err
	}
	if err := readTaskFile(filepath.Join(dir, runfiles.AgentFile), &job.Agent); err != nil {
		return err
	}
	// Checked again: the file is outside the worktree, but a loop's
	// agent could still have reached it.
	return CheckAgent(job.Task, job.Agent)
}

// readTaskFile decodes the JSON file at path into v, leaving v as it is
// when there is no such file.
func readTaskFile(path string, v any) error {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// writeTaskFiles writes the objective, the config overlay and the agent
// of task t. note, when set, is added to the objective: what the previous
// attempt ran into. An agent that cannot be used fails the task.
//
// They are written atomically but not flushed to stable storage: each
// start writes four, and a flush each held every other task's start and
// merge behind the disk (8 ms each on a busy machine). A killed autopilot
// finds them whole, as the kernel keeps what was written; after a machine
// went down, a restart writes again those it finds missing
// (ensureTaskFiles), as git may have lost the worktree beside them, which
// it writes unsynced too.
func (a *Autopilot) writeTaskFiles(t tasks.Task, note string) error {
	dir := a.taskDir(t.ID)
	agent, err := a.agentOf(t)
	if err != nil {
		return err
	}
	if err := ralphdir.MkdirAll(a.journal.dir, dir); err != nil {
		return err
	}
	if err := writeJSON(a.journal.dir, filepath.Join(dir, runfiles.AgentFile), agent); err != nil {
		return fmt.Errorf("write the agent of %s: %w", t.ID, err)
	}
	objective := Objective(t, a.opts.Source.Name(), a.opts.Settings.TrustTasks, note)
	if err := ralphdir.WriteFileAtomicUnsynced(a.journal.dir, filepath.Join(dir, runfiles.ObjectiveFile), []byte(objective)); err != nil {
		return fmt.Errorf("write the objective of %s: %w", t.ID, err)
	}
	commands, err := json.Marshal(a.trustedCommands(t))
	if err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomicUnsynced(a.journal.dir, filepath.Join(dir, runfiles.CommandsFile), commands); err != nil {
		return fmt.Errorf("write the commands of %s: %w", t.ID, err)
	}
	overlay, err := a.overlay(t)
	if err != nil {
		return err
	}
	return ralphdir.WriteFileAtomicUnsynced(a.journal.dir, filepath.Join(dir, runfiles.OverlayFile), overlay)
}

// agentOf is the agent t names, or why it cannot be used and where to
// correct it.
func (a *Autopilot) agentOf(t tasks.Task) (Agent, error) {
	agent, err := TaskAgent(t)
	if err != nil {
		return Agent{}, fmt.Errorf("%w; correct it in %s", err, a.opts.Source.Name())
	}
	return agent, nil
}

// writeJSON writes v as a task's file: atomically, unsynced (see
// writeTaskFiles).
func writeJSON(root, path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ralphdir.WriteFileAtomicUnsynced(root, path, data)
}

// trustedCommands are t's acceptance commands as criteria, when the config
// trusts them; none otherwise. Tracker text is not the config's author,
// so its commands run only when the config says so.
func (a *Autopilot) trustedCommands(t tasks.Task) []criteria.Spec {
	specs := []criteria.Spec{}
	if !a.opts.Settings.TrustTasks {
		return specs
	}
	for _, c := range t.Criteria {
		if c.Command != "" {
			specs = append(specs, criteria.Spec{Type: criteria.TypeCommandSucceeds, Command: c.Command, Name: c.Text})
		}
	}
	return specs
}

// overlay is the config laid over the user's for task t: its acceptance
// criteria, the config's own followed by the task's trusted commands, and
// the slots' sandbox, which a task's loop runs in where a plain loop might
// not (a slot runs unattended).
func (a *Autopilot) overlay(t tasks.Task) ([]byte, error) {
	specs := append(append([]criteria.Spec{}, a.opts.Criteria...), a.trustedCommands(t)...)
	doc := map[string]any{}
	if len(specs) > 0 {
		doc["acceptance_criteria"] = specs
	}
	if s := a.opts.Sandbox; s.Mode != "" {
		doc["sandbox"] = SandboxOverlay(s)
	}
	head := "# Written by ralph autopilot for task " + t.ID + ": its acceptance criteria and sandbox.\n"
	if len(doc) == 0 {
		return []byte(head + "{}\n"), nil
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(head), body...), nil
}

// Objective is the objective of task t's loop: its title, description and
// acceptance criteria. Criteria that are commands are requirements here
// unless trusted, when they also run as criteria.
func Objective(t tasks.Task, source string, trusted bool, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", t.Title)
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	if len(t.Criteria) > 0 {
		b.WriteString("## Acceptance criteria\n\n")
		for _, c := range t.Criteria {
			switch {
			case c.Command != "" && trusted:
				fmt.Fprintf(&b, "- %s (ralph runs `%s` to check it)\n", c.Text, c.Command)
			case c.Command != "":
				fmt.Fprintf(&b, "- `%s` succeeds\n", c.Command)
			default:
				fmt.Fprintf(&b, "- %s\n", c.Text)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "This is task %s from %s. Work in this directory, a git worktree on branch %s, and commit your work there: ralph merges the branch once the task is done.\n",
		t.ID, source, branchOf(t.ID))
	if note != "" {
		b.WriteString("\n## Before you go on\n\n" + note + "\n")
	}
	return b.String()
}

// SandboxOverlay is s as a sandbox: section of a config file, every key
// written, so that it replaces the section of the files under it.
func SandboxOverlay(s config.Sandbox) map[string]any {
	return map[string]any{"mode": s.Mode, "network": s.Network,
		"write": nonNil(s.Write), "deny_read": nonNil(s.DenyRead)}
}

// nonNil is paths, or an empty list: a nil one would be written as null,
// which sets nothing.
func nonNil(paths []string) []string {
	if paths == nil {
		return []string{}
	}
	return paths
}
