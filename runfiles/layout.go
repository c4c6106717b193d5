package runfiles

// AgentPIDFile holds the process group id of the running agent, so a ralph
// killed outright (SIGKILL, a crash) can be followed by one that stops the
// agent it left behind before running anything else. Its first line is the
// group id, which is the agent's pid (it leads its group); its second, when
// the system tells it, the agent's start time (processStart), which tells
// the agent from a later process that got its pid. It is empty while no
// agent runs. The file is kept and rewritten in place rather than created
// and removed around every agent: a new inode per iteration is most of
// what a file system charges a tight loop.
const AgentPIDFile = "agent.pgid"

// ScratchpadFile is the name of the agent's working notes, under .ralph/agent/
// during a run and under .ralph/runs/<id>/ once the next run started.
const ScratchpadFile = "scratchpad.md"

// Paths under the workspace.
const (
	DirName           = ".ralph"
	LockFile          = "loop.lock"
	StateFile         = "state.json"
	CurrentEventsFile = "current-events"
	RunsDir           = "runs"
	StopFile          = "stop"
)
