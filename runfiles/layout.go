package runfiles

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// DirName is the name of ralph's directory in a workspace.
const DirName = ralphdir.Name

// The loop's files under .ralph/. A path is built with Dir's methods; the
// names are exported for messages that name a file ("state.json is …").
const (
	LockFile          = "loop.lock"
	StateFile         = "state.json"
	CurrentEventsFile = "current-events"
	RunsDir           = "runs"
	StopFile          = "stop"
	// IgnoreFile is .ralph/.gitignore. ralph writes it on first use, as
	// build tools do in their cache folders, so that an agent's `git add
	// -A` never commits ralph's state, lock, event logs or raw agent
	// output, and `git clean -fd` leaves them alone.
	IgnoreFile = ".gitignore"
	// AgentPIDFile holds the process group id of the running agent, so a
	// ralph killed outright (SIGKILL, a crash) can be followed by one that
	// stops the agent it left behind before running anything else. Its
	// first line is the group id, which is the agent's pid (it leads its
	// group); its second, when the system tells it, the agent's start
	// time, which tells the agent from a later process that got its pid.
	// It is empty while no agent runs. The file is kept and rewritten in
	// place rather than created and removed around every agent: a new
	// inode per iteration is most of what a file system charges a tight
	// loop.
	AgentPIDFile = "agent.pgid"
	// ScratchpadFile is the name of the agent's working notes, under
	// .ralph/agent/ during a run and under .ralph/runs/<id>/ once the next
	// run started.
	ScratchpadFile = "scratchpad.md"
	// MemoriesFile holds the long-term memories, under .ralph/agent/.
	MemoriesFile = "memories.md"
	// ActivityFile is the name, under .ralph/runs/<run-id>/, of a run's
	// agent activity: one ActivityRecord a line, appended as the agents
	// act. The engine tells its reporters of an agent's activity in its
	// own process only; this file is how another process (`ralph watch`)
	// sees it.
	ActivityFile = "activity.jsonl"
	// SummaryFile is a run's summary, under .ralph/runs/<run-id>/.
	SummaryFile = "summary.md"
	// TokenFile is `ralph serve`'s bearer token.
	TokenFile = "serve.token"
	agentDir  = "agent"
)

// ScratchpadRel is the agent's scratchpad relative to the workspace, as a
// prompt names it.
var ScratchpadRel = filepath.ToSlash(filepath.Join(DirName, agentDir, ScratchpadFile))

// Dir is a workspace's .ralph directory: where each of ralph's files is.
type Dir string

// In is the .ralph directory of workspace.
func In(workspace string) Dir { return Dir(filepath.Join(workspace, DirName)) }

// Path is the directory itself.
func (d Dir) Path() string { return string(d) }

// Workspace is the directory .ralph/ is in. A chain step's directory
// (.ralph/chains/<run>/step-N) is a Dir too, and its workspace is the
// project's: the nearest .ralph above it says where that is.
func (d Dir) Workspace() string {
	for p := string(d); filepath.Dir(p) != p; p = filepath.Dir(p) {
		if filepath.Base(p) == DirName {
			return filepath.Dir(p)
		}
	}
	return filepath.Dir(string(d))
}

// Rel is the directory relative to its workspace: .ralph, or a chain
// step's .ralph/chains/<run>/step-N. The event logs a run's state names
// are relative to the workspace, so a step's logs are named with this.
func (d Dir) Rel() string {
	rel, err := filepath.Rel(d.Workspace(), string(d))
	if err != nil {
		return DirName
	}
	return rel
}

func (d Dir) file(name ...string) string {
	return filepath.Join(append([]string{string(d)}, name...)...)
}

// The files of a chain (`ralph chain run`): under .ralph/chains/<run>/
// the chain's state and each step's loop in step-N/ (a Dir of its own);
// .ralph/chains/chain.lock, held by the chain that runs; and
// .ralph/current-chain naming the latest chain run for `--resume` and the
// views.
const (
	ChainsDir        = "chains"
	ChainStateFile   = "chain.json"
	ChainLockFile    = "chain.lock"
	CurrentChainFile = "current-chain"
	HandoffFile      = "handoff.md"
	chainStepPrefix  = "step-"
)

// Chain is the directory of chain run id.
func (d Dir) Chain(id string) string { return d.file(ChainsDir, id) }

// ChainState is chain run id's state.
func (d Dir) ChainState(id string) string { return d.file(ChainsDir, id, ChainStateFile) }

// ChainLock is held by the chain that runs in the workspace: one at a
// time, since their steps share the working tree.
func (d Dir) ChainLock() string { return d.file(ChainsDir, ChainLockFile) }

// CurrentChain names the latest chain run.
func (d Dir) CurrentChain() string { return d.file(CurrentChainFile) }

// ChainStep is the .ralph directory of step n (from 1) of chain run id:
// the step's loop keeps its state, lock, event log and runs there, while
// its agent works in the workspace.
func (d Dir) ChainStep(id string, n int) Dir {
	return Dir(d.file(ChainsDir, id, fmt.Sprintf("%s%d", chainStepPrefix, n)))
}

// Handoff is where a chain step's agent leaves notes for the next step
// ($RALPH_STEP_DIR/handoff.md).
func (d Dir) Handoff() string { return d.file(HandoffFile) }

// StepDirIn is the chain step directory rel (relative to workspace, or
// absolute) names, refused unless it is .ralph/chains/<run>/step-N of
// that workspace: a loop keeps its state there instead of .ralph/.
func StepDirIn(workspace, rel string) (Dir, error) {
	abs := rel
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(workspace, rel)
	}
	r, err := filepath.Rel(workspace, abs)
	if err != nil || !isChainStepRel(r) {
		return "", fmt.Errorf("%s is not a chain step's directory (%s/%s/<run>/%sN in the workspace)", rel, DirName, ChainsDir, chainStepPrefix)
	}
	return Dir(abs), nil
}

// isChainStepRel reports whether rel, relative to the workspace, is a
// chain step's directory: .ralph/chains/<run>/step-N.
func isChainStepRel(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 4 || parts[0] != DirName || parts[1] != ChainsDir || parts[2] == "" || parts[2] == "." || parts[2] == ".." {
		return false
	}
	n, ok := strings.CutPrefix(parts[3], chainStepPrefix)
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Lock is the loop's lock, held for the whole run.
func (d Dir) Lock() string { return d.file(LockFile) }

// State is the run's checkpoint.
func (d Dir) State() string { return d.file(StateFile) }

// CurrentEvents names the current run's event log.
func (d Dir) CurrentEvents() string { return d.file(CurrentEventsFile) }

// Stop is where `ralph stop` writes its request.
func (d Dir) Stop() string { return d.file(StopFile) }

// AgentPID is the running agent's process group (AgentPIDFile).
func (d Dir) AgentPID() string { return d.file(AgentPIDFile) }

// WaveAgentPID is AgentPIDFile for worker i (from 0) of a wave, whose
// agents run at once.
func (d Dir) WaveAgentPID(i int) string { return d.file(fmt.Sprintf(WaveAgentPIDPattern, i+1)) }

// WaveAgentPIDPattern names the files WaveAgentPID gives, with the
// worker's number from 1.
const WaveAgentPIDPattern = "agent-wave-%02d.pgid"

// Ignore keeps ralph's files out of git.
func (d Dir) Ignore() string { return d.file(IgnoreFile) }

// Scratchpad is the agent's working notes across one run's iterations.
func (d Dir) Scratchpad() string { return d.file(agentDir, ScratchpadFile) }

// Memories is the long-term memories across runs.
func (d Dir) Memories() string { return d.file(agentDir, MemoriesFile) }

// ServeToken is `ralph serve`'s bearer token.
func (d Dir) ServeToken() string { return d.file(TokenFile) }

// Run is the directory of run id's files: its raw output, activity and
// summary, and once the next run started its checkpoint and scratchpad.
func (d Dir) Run(id string) string { return d.file(RunsDir, id) }

// Activity is run id's agent activity (ActivityFile).
func (d Dir) Activity(id string) string { return d.file(RunsDir, id, ActivityFile) }

// Summary is run id's summary, written when it ends.
func (d Dir) Summary(id string) string { return d.file(RunsDir, id, SummaryFile) }

// RawOutput is the name, in a run's directory, of iteration n's raw agent
// output: iter-NNNN.jsonl, and iter-NNNN.attemptK.jsonl for the K-th attempt
// of an iteration repeated after an interruption or a rate limit.
func RawOutput(n, attempt int) string {
	if attempt > 1 {
		return fmt.Sprintf("iter-%04d.attempt%d.jsonl", n, attempt)
	}
	return fmt.Sprintf("iter-%04d.jsonl", n)
}

// Prompt is the name, in a run's directory, of the prompt iteration n's
// agent was given (redacted): prompt-NNNN.md, and prompt-NNNN.attemptK.md
// for the K-th attempt, numbered as RawOutput is, so that an attempt's
// prompt and its output sit side by side. A repeated iteration keeps every
// attempt's prompt rather than overwrite the first: the repeat is built
// afresh (the interrupted agent may have changed the scratchpad), and what
// the interrupted agent was told is part of what it did.
func Prompt(n, attempt int) string {
	if attempt > 1 {
		return fmt.Sprintf("prompt-%04d.attempt%d.md", n, attempt)
	}
	return fmt.Sprintf("prompt-%04d.md", n)
}

// TreeIndex is the name, in a run's directory, of the git index the
// engine stages the workspace's files into to record an iteration's tree,
// never the user's own index (git.Repo.WorkTree).
const TreeIndex = "tree.index"

// EventLogName is the name of a new run's event log started at stamp
// (UTC, to the second), seq the how-many-th run to start in that second
// (0 for the first): events-YYYYMMDD-HHMMSS[-seq].jsonl.
func EventLogName(stamp string, seq int) string {
	if seq > 0 {
		return fmt.Sprintf("%s%s-%d%s", eventLogPrefix, stamp, seq, eventLogSuffix)
	}
	return eventLogPrefix + stamp + eventLogSuffix
}

// IsEventLog reports whether name is the name of a run's event log.
func IsEventLog(name string) bool {
	return strings.HasPrefix(name, eventLogPrefix) && strings.HasSuffix(name, eventLogSuffix)
}

// logStamp is a log's name without events- and .jsonl: its start time,
// and its sequence number if it has one.
func logStamp(path string) string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), eventLogPrefix), eventLogSuffix)
}

const (
	eventLogPrefix = "events-"
	eventLogSuffix = ".jsonl"
)
