package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/runfiles"
)

// Backend runs one agent process for one prompt.
//
// Run blocks until the agent has exited and every process it started is
// gone. A failed agent (non-zero exit, time-out, an error it reported, a rate
// limit) is described by the result, not by an error. Run returns an error
// only when the agent could not run at all — a missing binary, which moves
// the iteration to the next backend of its chain (Options.Fallback) or, with
// none, ends the loop as fatal — or when ctx was cancelled, in which case it
// returns ctx's error along with whatever result it had. A result whose
// Failure is FailureAuth or FailureProvider is the provider's fault, not the
// work's: the chain's next backend gets the same iteration.
type Backend interface {
	Name() string
	Run(ctx context.Context, run events.AgentRun, report func(events.Activity)) (events.AgentResult, error)
}

// Sandboxed is a Backend that confines its agent: Sandbox describes how
// ("landlock", "bwrap, network deny", "off"), for the iteration's record.
type Sandboxed interface {
	Sandbox() string
}

// sandboxOf is how b confines its agent; "" when it does not say.
func sandboxOf(b Backend) string {
	if s, ok := b.(Sandboxed); ok {
		return s.Sandbox()
	}
	return ""
}

// ToolDenier is a Backend that denies its agent tools: DisallowedTools
// lists them, for the iteration's record.
type ToolDenier interface {
	DisallowedTools() []string
}

// deniedOf are the tools b denies its agent; nil when it does not say.
func deniedOf(b Backend) []string {
	if d, ok := b.(ToolDenier); ok {
		return d.DisallowedTools()
	}
	return nil
}

// Hooks run the user's lifecycle hooks (package hooks) on the lines of a
// run's log.
//
// Fire is given, in log order, the lines a fold has just read: ralph's
// own lines as they are folded, an agent's line once ralph has accepted it
// (at its own offset, just before the event.routed line that accepted
// it), never a rejected one. It runs the hooks due, appending lines (in
// one write per call) with appendLines, which writes them to the log and
// folds them, handing them to Fire again. The engine calls Fire after
// every fold, so no checkpoint is written past a line whose hooks have not
// been started: that is what keeps a hook to once per event across a
// crash. Fire returns warnings to report, and a non-nil error (one that
// is not appendLines') when a hook's failure must end the run as fatal.
type Hooks interface {
	Fire(ctx context.Context, runID string, lines []events.Record,
		appendLines func(...events.Event) error) (warnings []string, err error)
}

// Settings are the loop's rules: the event_loop section of ralph.yml.
type Settings struct {
	CompletionTopic        string
	StartingEvent          string
	CancellationTopic      string
	RequiredEvents         []string
	MaxIterations          int
	MaxRuntime             time.Duration
	MaxCostUSD             float64
	MaxTokens              int64
	MaxConsecutiveFailures int
	Cooldown               time.Duration
	EnforceHatScope        bool
	// Confirmations is 2 when a claimed completion must be confirmed by a
	// second, fresh agent; 1 accepts the first claim.
	Confirmations    int
	IterationTimeout time.Duration
	IdleTimeout      time.Duration
	RateLimitMaxWait time.Duration
	// Pacing are the budgets that make the run wait, rather than end,
	// when the next iteration would exceed a window's (pace.go).
	Pacing Pacing
	// Human says how a question an agent asks waits for its answer.
	Human HumanSettings

	// AcceptanceCriteria must pass for a completion claim to count; with
	// VerifyEveryIteration they are checked after every iteration and
	// complete the run by themselves (a ralph.json task file).
	AcceptanceCriteria   []criteria.Spec
	VerifyEveryIteration bool
	Gates                []Gate
	// StuckThreshold is how many iterations in a row without progress end
	// the run as stuck; 0 turns the check off.
	StuckThreshold int
	// SpecFile turns on SPEC mode: the agent works through the file's
	// checkboxes; a checked box is progress and all checked completes.
	SpecFile string
	// MemoriesBudget bounds the characters of memories in a prompt; 0
	// injects none.
	MemoriesBudget int
	// ShareMemories keeps .ralph/agent/memories.md visible to git, so it
	// can be committed; the rest of .ralph/ is always ignored.
	ShareMemories bool
}

// HumanSettings are the human: section of ralph.yml.
type HumanSettings struct {
	// Timeout is how long a question waits for its answer when `ralph
	// ask` gave no --timeout; 0 waits until answered.
	Timeout time.Duration
	// OnTimeout is OnTimeoutContinue or OnTimeoutStop; "" continues.
	OnTimeout string
}

// Options configure a run. New refuses options without the fields marked
// required.
type Options struct {
	Workspace string // required: the repository the agent works in
	// StateDir is the .ralph directory the run keeps its files in
	// (runfiles.Dir): "" for the workspace's own, a chain step's
	// .ralph/chains/<run>/step-N for a loop a chain runs, so that its
	// state, lock and logs are its own while its agent works in the
	// workspace.
	StateDir string
	// Objective is the task; required to start a run, while a resumed run
	// keeps the one it recorded.
	Objective string
	Source    string         // where the objective came from, for the log
	Config    string         // the config file path, for the log
	Settings  Settings       // the loop's rules; the zero value has no limits
	Hats      *hats.Registry // required
	Backend   Backend        // required: the default backend
	PerHat    map[string]Backend
	// Fallback is the rest of each backend chain (cli.fallback), by the
	// hat whose backend heads it ("" for the default backend's).
	Fallback map[string]Fallback
	// Prices are what the models cost, for the iterations whose agent does
	// not report a cost itself; nil knows no prices, so those costs are
	// unknown.
	Prices *pricing.Table
	// Repo, when set, reports the commits each iteration makes.
	Repo Repo
	// Verify runs criteria; nil means criteria.CheckAll.
	Verify Verifier
	// CheckSandbox is the confinement of the criteria and gates checked
	// on the work of hat's agent (a completion it claimed, an event it
	// published; "" for checks about no one hat, the baseline): the
	// agent's own, whose workspace is the run's. Nil, or a nil Sandbox,
	// runs them unconfined.
	CheckSandbox func(hat string) criteria.Sandbox
	// GitPin is where the workspace's repository is when ralph made the
	// work tree (an autopilot slot): ralph's git in the workspace, the
	// criteria's included, is told, and never reads the workspace's .git
	// to find it (see git.Pin). Repo is built with the same pin.
	GitPin   git.Pin
	RalphBin string // absolute path of the ralph binary, for `ralph emit`
	// AgentEnv is added to every agent's environment (PATH with ralph's
	// directory first, for one).
	AgentEnv []string
	// Redactor hides secret values in the lines the engine appends and
	// reads, the summary and everything it reports (see redact.go). Build
	// it from the environment agents get; nil hides nothing.
	Redactor *redact.Redactor
	Logger   *slog.Logger     // nil discards the log
	Reporter Reporter         // required: progress for people or programs
	Now      func() time.Time // defaults to time.Now
	// Sleep waits d, or until ctx ends, on the clock Now reads; nil waits
	// on a timer. The pacing wait sleeps through it, so a test whose clock
	// it moves goes past the wait at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// SummaryFile renders the summary a finished run leaves in
	// .ralph/runs/<run-id>/summary.md; nil writes none. The command line
	// renders it, with its advice on what to do next.
	SummaryFile func(Summary) string

	// Hooks run the user's hooks on the lines of the run's log; nil runs
	// none.
	Hooks Hooks

	// Launch is how the command line started the run, recorded in
	// loop.started and, on resume, loop.resumed (see Launch); nil records
	// nothing.
	Launch *runfiles.Launch

	// Start says whether to begin a new run or resume one; "" is runfiles.StartNew.
	Start runfiles.StartMode
	Wait  bool // wait for the workspace lock instead of failing
	// OrphanLockWait bounds the wait for a lock whose recorded holder is
	// dead; zero means DefaultOrphanLockWait.
	OrphanLockWait time.Duration
	// Exclude is asked once the workspace lock is held, before anything
	// is read or written, whether something else that works in the
	// workspace rules the run out (the command line asks whether an
	// autopilot runs in the same checkout); its error ends Run. Nil rules
	// nothing out.
	Exclude func() error

	// KillGrace is how long an orphaned agent found on resume gets between
	// SIGTERM and SIGKILL; zero means 10 seconds.
	KillGrace time.Duration

	// ForceKill is closed when the user asks a second time to stop: the
	// running agent is killed without its grace period.
	ForceKill <-chan struct{}
	// Fault is called at named points of each step (see the Fault*
	// constants) so crash tests can kill the process exactly there. A true
	// return at FaultAppendTorn asks for a torn write: half the step's
	// bytes are written before FaultDie is called. Nil in normal runs.
	Fault func(point string) bool
	// WriteFault, when set, is asked before each write to one of ralph's
	// files (see the File* names) and may fail it with an error such as
	// syscall.ENOSPC, as a full or broken disk would. Nil in normal runs.
	WriteFault func(file string) error
}

// Files whose writes WriteFault can fail.
const (
	FileEventLog   = "eventlog"
	FileCheckpoint = "checkpoint"
	FileRawOutput  = "rawoutput"
	FilePrompt     = "prompt"
)

// Fault points.
const (
	FaultAppendBefore    = "append.before"    // a step's lines are about to be written
	FaultAppendTorn      = "append.torn"      // the write may be torn here
	FaultAppendAfter     = "append.after"     // the lines are written, not yet folded
	FaultCheckpointTemp  = "checkpoint.temp"  // the new state.json is written to its temp file, not yet renamed
	FaultCheckpointAfter = "checkpoint.after" // state.json is replaced
	FaultAgentStarted    = "agent.started"    // the agent process is running
	// FaultWaveWorkerFinished: a wave's worker ended and wave.worker_finished is written.
	FaultWaveWorkerFinished = "wave.worker_finished"
	FaultDie                = "die" // the torn write is done: die now
)

// Reporter is told what the loop does, as it happens. Implementations
// render it for a terminal, as JSON lines, or not at all.
type Reporter interface {
	LoopStarted(run RunInfo)
	IterationStarted(it IterationInfo)
	Activity(it IterationInfo, a events.Activity)
	// EventAccepted: as is "" for a routed event, or claim, completion or
	// cancellation for the topics that end a run.
	EventAccepted(ev events.Event, to []string, as runfiles.Disposition)
	EventRejected(ev events.Event, reason string)
	IterationFinished(it IterationInfo, res events.AgentResult)
	Commit(it IterationInfo, c Commit)
	RateLimited(it IterationInfo, wait time.Duration)
	Warn(msg string)
	LoopFinished(sum Summary)
}

// RunInfo describes a run as it starts or resumes.
type RunInfo struct {
	RunID      string
	Resumed    bool
	Objective  string
	Source     string
	Config     string
	Hats       []string
	EventsFile string
	MaxIter    int
	// Spec is the SPEC file of a SPEC-mode run as a person in the
	// workspace would write it, else Source. Tasks is how many boxes it
	// has: a run without one has one task, its objective.
	Spec  string
	Tasks int
	// On resume, what the run had done before: iterations, cost, tokens
	// and commits, so a display can carry on from there.
	Iterations int
	Cost       runfiles.CostTotal
	Usage      events.Usage
	Commits    int
}

// IterationInfo identifies an iteration.
type IterationInfo struct {
	N       int
	Max     int
	Hat     hats.Hat
	Backend string
	// Sandbox is how the agent is confined ("" when the backend does not
	// say; see Sandboxed).
	Sandbox    string
	Confirming bool
	Prompt     string
	// PromptFile is where the prompt is kept, with secret values hidden,
	// relative to the workspace (a run's prompt-NNNN.md); PromptBytes and
	// PromptSHA256 are that file's size and hash.
	PromptFile   string
	PromptBytes  int
	PromptSHA256 string
	Started      time.Time
	// Outcome is set for IterationFinished: success, failure,
	// rate_limited or interrupted.
	Outcome runfiles.Outcome
	// Cost is set for IterationFinished: what the iteration cost and how
	// ralph knows (the result's CostUSD is the same figure).
	Cost runfiles.IterationCost
}

// NoticeReporter is a Reporter that also tells people what the run is
// doing that is neither progress nor a problem (a long check about to
// start), where Warn would cry wolf.
type NoticeReporter interface {
	Notice(msg string)
}

// StuckReporter is a Reporter that wants to hear, before LoopFinished, that
// the run is ending because it made no progress, and how it ends.
type StuckReporter interface {
	Stuck(end runfiles.Termination, withoutProgress int)
}
