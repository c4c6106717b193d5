package main

import (
	"strings"

	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/redact"
)

// envVar is an environment variable ralph reads, or sets for what it runs.
type envVar struct {
	Name string `json:"name"`
	// Read says ralph reads it; ReadBy names the command (or "any").
	Read bool `json:"read"`
	// SetFor names what ralph sets it for: agent, hook, task_command,
	// loop (the loops the autopilot and workers start); none when ralph
	// only reads it.
	SetFor []string `json:"set_for,omitempty"`
	What   string   `json:"what"`
}

// how is "read", "set for agent, hook" or both, for the text form.
func (e envVar) how() string {
	var parts []string
	if e.Read {
		parts = append(parts, "read")
	}
	if len(e.SetFor) > 0 {
		parts = append(parts, "set for "+strings.Join(e.SetFor, ", "))
	}
	return strings.Join(parts, "; ")
}

// environment is every environment variable ralph reads or sets, in one
// place: TestEnvironmentIsComplete finds the RALPH_ names in ralph's code
// and the env tags of its flags, and fails on one that is missing here, or
// listed here but no longer in the code.
var environment = []envVar{
	{Name: "RALPH_EVENTS_FILE", Read: true, SetFor: []string{"agent", "hook"},
		What: "the run's event log, which ralph emit, ask and guide append to"},
	{Name: "RALPH_ITERATION", Read: true, SetFor: []string{"agent", "hook"},
		What: "the iteration the agent runs in; ralph emit marks its events with it (empty for a hook outside an iteration)"},
	{Name: "RALPH_HAT", Read: true, SetFor: []string{"agent", "hook"}, What: "the hat the agent wears"},
	{Name: "RALPH_BENCH_CLUSTER_TASKS", Read: true, What: "how many tasks BenchmarkClusterScale runs (make bench's, not ralph's)"},
	{Name: "RALPH_BENCH_CLUSTER_AGENT_SECONDS", Read: true, What: "how many seconds each task's agent takes in BenchmarkClusterScale, 2 unless set (make bench's, not ralph's)"},
	{Name: "RALPH_STEP_DIR", SetFor: []string{"loop"}, What: "a chain step's directory, where its agent may write handoff.md for the next step"},
	{Name: "RALPH_CHAIN_RUN", SetFor: []string{"loop"}, What: "the chain run a step's loop belongs to"},
	{Name: "RALPH_CHAIN_STEP", SetFor: []string{"loop"}, What: "the number of a chain step, from 1"},
	{Name: "RALPH_WAVE_WORKER", Read: true, SetFor: []string{"agent"}, What: "1 for one worker of a wave (a hat with concurrency); `ralph wave emit` refuses to run there"},
	{Name: "RALPH_WAVE_ID", SetFor: []string{"agent"}, What: "a wave worker's wave, as its events' wave_id"},
	{Name: "RALPH_WAVE_INDEX", SetFor: []string{"agent"}, What: "a wave worker's index in its wave, from 0: its event's wave_index"},
	{Name: "RALPH_WAVE_TOTAL", SetFor: []string{"agent"}, What: "how many workers the wave has"},
	{Name: "RALPH_RUN_ID", SetFor: []string{"agent", "hook"}, What: "the run's id"},
	{Name: "RALPH_WORKSPACE", SetFor: []string{"agent", "hook"}, What: "the workspace's directory"},
	{Name: "RALPH_BIN", SetFor: []string{"agent"}, What: "the ralph binary that runs the loop"},
	{Name: "RALPH_HOOK", SetFor: []string{"hook"}, What: "the hook's name"},
	{Name: "RALPH_EVENT_TOPIC", SetFor: []string{"hook"}, What: "the topic of the event the hook runs on (the event is on stdin)"},
	{Name: "RALPH_EVENT_OFFSET", SetFor: []string{"hook"}, What: "the event's byte offset in the log"},
	{Name: "RALPH_TASK", SetFor: []string{"hook"}, What: "the autopilot task the event is about, if any"},
	{Name: "RALPH_TASK_ID", SetFor: []string{"task_command"}, What: "the task a command source's claim, close or fail acts on"},
	{Name: "RALPH_TASK_REASON", SetFor: []string{"task_command"}, What: "why the task is closed or failed"},
	{Name: redact.NamesVar, Read: true, SetFor: []string{"agent"},
		What: "more variable names, comma-separated, whose values ralph hides (as redact: in ralph.yml)"},
	{Name: SandboxWriteEnv, Read: true,
		What: "more paths, separated as in PATH, an agent in the sandbox may write"},
	{Name: workspacegit.PinGitDirEnv, Read: true, SetFor: []string{"loop"},
		What: "the git directory of a worktree ralph made, which a sandboxed loop's git is pinned to"},
	{Name: workspacegit.PinCommonDirEnv, Read: true, SetFor: []string{"loop"},
		What: "the common git directory of a worktree ralph made, as RALPH_GIT_DIR"},
	{Name: procgroup.MarkEnv, SetFor: []string{"agent", "loop"},
		What: "marks the processes of a run, so that ralph finds what an agent left behind"},
	{Name: "RALPH_CLUSTER", Read: true, What: "ralph worker --cluster: the NATS servers"},
	{Name: "RALPH_TRUST_COORDINATOR", Read: true, What: "ralph worker --trust-coordinator: the coordinators' public keys"},
	{Name: "XDG_CONFIG_HOME", Read: true,
		What: "where the user config (ralph/config.yml) and the cluster's keys are; else the system's user config directory"},
	{Name: "GITHUB_TOKEN", Read: true, What: "the default autopilot.source.token_env and autopilot.pr.token_env of GitHub; token_env names another"},
	{Name: "GITLAB_TOKEN", Read: true, What: "the default token_env of GitLab"},
	{Name: "LINEAR_API_KEY", Read: true, What: "the default token_env of Linear"},
	{Name: "TERM", Read: true, What: "ralph watch and the live view: dumb gets plain lines"},
	{Name: "PATH", Read: true, SetFor: []string{"agent"}, What: "where agent CLIs are found; an agent's has ralph's directory first, for ralph emit"},
}
