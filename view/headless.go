package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// The --headless stream: one JSON object per line on stdout, each with
// "event" (its kind), "ts" and "timestamp" (the same RFC 3339 UTC time)
// first. It is a superset of the RalphEvent union of the headless
// specification ralph follows (started, iteration, tool, commit,
// task_complete, iteration_done, stuck, complete, failed, each with its
// fields, names and types) beside ralph's own fields and events. The
// types below are the schema (HeadlessSchema, `ralph schema --headless`,
// generated from them with the descriptions in their jsonschema tags).
// Fields are only ever added, never renamed, so a program that reads the
// stream keeps working.

// headStarted: the run started or resumed.
type headStarted struct {
	Spec            string   `json:"spec" jsonschema:"the SPEC file of a SPEC-mode run, else where the objective came from"`
	Tasks           int      `json:"tasks" jsonschema:"how many boxes the SPEC has; a run without one has one task, its objective"`
	RunID           string   `json:"run_id"`
	Resumed         bool     `json:"resumed"`
	Config          string   `json:"config"`
	ObjectiveSource string   `json:"objective_source"`
	Hats            []string `json:"hats"`
	MaxIterations   int      `json:"max_iterations"`
	EventsFile      string   `json:"events_file"`
}

// headIteration: an iteration started.
type headIteration struct {
	N       int    `json:"n"`
	Max     int    `json:"max"`
	Hat     string `json:"hat"`
	Backend string `json:"backend"`
	Phase   string `json:"phase"` // working, confirming
	// Prompt is the file that keeps the agent's prompt (redacted),
	// relative to the workspace, with its size and sha256.
	Prompt       string `json:"prompt,omitempty" jsonschema:"the file keeping the agent's prompt, secrets hidden, relative to the workspace (ralph inspect prompt N shows it)"`
	PromptBytes  int    `json:"prompt_bytes,omitempty"`
	PromptSHA256 string `json:"prompt_sha256,omitempty"`
}

// headTool: the agent read or wrote a file or ran a command (tool), or
// used another tool (tool_other).
type headTool struct {
	Type      string `json:"type" jsonschema:"read, write or bash in a tool event; other in a tool_other event"`
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	Name      string `json:"name" jsonschema:"the tool's name in the agent CLI"`
	Path      string `json:"path,omitempty"`
	Command   string `json:"command,omitempty"`
}

// headCommit: a commit appeared in the workspace during an iteration.
type headCommit struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	Hash      string `json:"hash"`
	Message   string `json:"message"`
}

// headEvent: an event the agent published was accepted and routed.
type headEvent struct {
	Topic     string   `json:"topic"`
	Hat       string   `json:"hat"`
	Iteration int      `json:"iteration"`
	Source    string   `json:"source"`
	To        []string `json:"to"`
	// As is claim, completion or cancellation for the topics that end a
	// run, absent for a routed event.
	As      runfiles.Disposition `json:"as,omitempty"`
	Payload json.RawMessage      `json:"payload"`
}

// headRejected: an event the agent published was not accepted.
type headRejected struct {
	Topic     string `json:"topic"`
	Hat       string `json:"hat"`
	Iteration int    `json:"iteration"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail,omitempty"`
}

// headTaskComplete: SPEC mode saw a checkbox become checked.
type headTaskComplete struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// headTokens counts tokens; cache figures appear when the agent reports them.
type headTokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
	Total      int64 `json:"total"`
}

func tokensOf(u events.Usage) headTokens {
	return headTokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
		CacheWrite: u.CacheWriteTokens, Total: u.Total()}
}

type headStats struct {
	Reads  int `json:"reads"`
	Writes int `json:"writes"`
	Shell  int `json:"shell"`
	Other  int `json:"other"`
}

// headIterationDone: an iteration's agent exited.
type headIterationDone struct {
	N          int                 `json:"n"`
	Hat        string              `json:"hat"`
	DurationMS int64               `json:"duration_ms"`
	Tokens     headTokens          `json:"tokens"`
	Cost       *float64            `json:"cost" jsonschema:"US dollars; null when unknown (the agent reported none and the model has no price)"`
	CostSource runfiles.CostSource `json:"cost_source" jsonschema:"reported, computed (from tokens at the model's price) or unknown"`
	Model      string              `json:"model,omitempty"`
	Stats      headStats           `json:"stats"`
	Outcome    runfiles.Outcome    `json:"outcome"` // success, failure, rate_limited, interrupted, switched
	Failure    events.FailureKind  `json:"failure,omitempty"`
	Message    string              `json:"message,omitempty"`
	ExitCode   int                 `json:"exit_code"`
}

// headStuck: iterations stopped making progress.
type headStuck struct {
	Reason                    string `json:"reason"`
	IterationsWithoutProgress int    `json:"iterations_without_progress"`
}

// headRateLimited: the agent hit a rate limit; the iteration repeats after
// the wait.
type headRateLimited struct {
	N      int    `json:"n"`
	Hat    string `json:"hat"`
	WaitMS int64  `json:"wait_ms"`
}

// headPaced: the next iteration would exceed a pacing budget; the run
// waits until the window allows it. used, budget and estimate are in the
// window's unit: tokens, or US dollars for cost_per_hour and cost_per_day.
type headPaced struct {
	Window   string    `json:"window"`
	Used     float64   `json:"used"`
	Budget   float64   `json:"budget"`
	Estimate float64   `json:"estimate"`
	Until    time.Time `json:"until"`
	WaitMS   int64     `json:"wait_ms"`
	Oversize bool      `json:"oversize,omitempty"`
}

// headBackendSwitched: the iteration's agent hit a far rate limit or
// failed for the provider's sake, and the run goes on with the next
// backend of its chain (cli.fallback), or an earlier one is available
// again.
type headBackendSwitched struct {
	N       int                   `json:"n"`
	Hat     string                `json:"hat"`
	From    string                `json:"from"`
	To      string                `json:"to"`
	Reason  runfiles.SwitchReason `json:"reason" jsonschema:"rate_limit, auth, unavailable, overloaded or recovered"`
	ResetAt string                `json:"reset_at,omitempty" jsonschema:"when from is tried again (RFC 3339); absent: when the run is resumed, or for recovered"`
	Message string                `json:"message,omitempty"`
}

// headWave: the iteration n runs a wave of hat's, or one of its workers
// ended.
type headWave struct {
	N           int    `json:"n"`
	Hat         string `json:"hat"`
	WaveID      string `json:"wave_id"`
	Workers     int    `json:"workers" jsonschema:"how many workers the wave has, one per event"`
	Concurrency int    `json:"concurrency" jsonschema:"how many run at once at most"`
	Done        int    `json:"done" jsonschema:"how many workers have ended"`
	Failed      int    `json:"failed" jsonschema:"how many of those failed, missed the wave's timeout or were stopped by the run's limit"`
}

// headComplete: the run ended: `complete` when it completed (every task
// done), `ended` however else it ended, reason and exit_code saying how.
// A run that ends as fatal gets `failed` instead.
type headComplete struct {
	TasksDone       int                 `json:"tasks_done" jsonschema:"how many tasks are done: the SPEC's checked boxes, or 1 when a run without one completed"`
	TotalDurationMS int64               `json:"total_duration_ms"`
	RunID           string              `json:"run_id"`
	Reason          string              `json:"reason"`
	ExitCode        int                 `json:"exit_code"`
	Message         string              `json:"message,omitempty"`
	Iterations      int                 `json:"iterations"`
	Confirmations   int                 `json:"confirmation_iterations,omitempty"`
	Cost            *float64            `json:"cost" jsonschema:"US dollars the run spent; null when some iteration's cost is unknown (cost_known is the part that is known)"`
	CostKnown       float64             `json:"cost_known" jsonschema:"US dollars of the iterations whose cost is known"`
	CostSource      runfiles.CostSource `json:"cost_source"`
	CostUnknown     bool                `json:"cost_unknown" jsonschema:"some iteration's cost is unknown"`
	Tokens          headTokens          `json:"tokens"`
	// ByBackend: what each backend's iterations used, when a fallback
	// chain moved the run between backends.
	ByBackend      map[string]headBackendTotal `json:"by_backend,omitempty"`
	Activations    map[string]int              `json:"activations"`
	EventsAccepted int                         `json:"events_accepted"`
	EventsRejected int                         `json:"events_rejected"`
	Commits        int                         `json:"commits"`
	EventsFile     string                      `json:"events_file"`
	// AlreadyEnded: a resume found the run ended at EndedAt, and ran
	// nothing; the line says how it ended then.
	AlreadyEnded bool       `json:"already_ended,omitempty"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
}

// headBackendTotal is one backend's share of a run.
type headBackendTotal struct {
	Iterations int        `json:"iterations"`
	Tokens     headTokens `json:"tokens"`
	CostUSD    float64    `json:"cost_usd" jsonschema:"US dollars of its iterations whose cost is known"`
}

// headFailed: ralph could not run the loop or hit an error it cannot
// recover from (exit 3). When the loop had started, the run's figures so far
// come with it.
type headFailed struct {
	Error    string        `json:"error"`
	Hint     string        `json:"hint,omitempty"`
	ExitCode int           `json:"exit_code"`
	Run      *headComplete `json:"run,omitempty"`
}

type headWarning struct {
	Message string `json:"message"`
}

// Headless writes the --headless stream. It writes JSON only: people
// still get the warnings, the end-of-run summary and errors on stderr from a
// Text view beside it, the plain progress lines too with --verbose (see
// Essentials). The default is kept short on purpose: a program that runs
// ralph often pipes stderr without reading it, and a full pipe would stall
// the loop.
type Headless struct {
	mu    sync.Mutex
	out   io.Writer
	model *Model // for the commits and whether `stuck` was written
	now   func() time.Time

	// stuckThreshold is the config's stuck_threshold: how many iterations
	// without progress a run that ended stuck went through.
	stuckThreshold int
	// ended is set once complete or failed is written: exactly one of them
	// ends every stream.
	ended bool
	// fatal holds a run that ended as fatal until Close writes `failed`
	// with the error that ended it.
	fatal *headComplete
}

// NewHeadless writes the stream of m's run on out; m must be fed the same
// reports first (see Tee).
func NewHeadless(out io.Writer, m *Model, now func() time.Time) *Headless {
	return &Headless{out: out, model: m, now: now}
}

// emit writes one line. Write errors are ignored: the reader of stdout has
// gone, and the loop must still finish and checkpoint.
func (r *Headless) emit(kind string, body any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emitLocked(kind, body)
}

func (r *Headless) emitLocked(kind string, body any) {
	line, err := headlessLine(kind, r.now(), body)
	if err != nil {
		line, _ = headlessLine("warning", r.now(), headWarning{Message: "cannot encode a " + kind + " event: " + err.Error()})
	}
	_, _ = r.out.Write(line)
}

// headlessLine renders {"event":kind,"ts":…,<body's fields>}\n. The body's
// fields are spliced in after the two common ones, so every line starts the
// same way and each event type stays a plain struct.
func headlessLine(kind string, ts time.Time, body any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <, > and & in commands readable
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	fields := bytes.TrimSpace(buf.Bytes())
	if len(fields) < 2 || fields[0] != '{' {
		return nil, errors.New("a headless event body must be a JSON object")
	}
	at := ts.UTC().Format(time.RFC3339Nano)
	head, _ := json.Marshal(struct {
		Event     string `json:"event"`
		TS        string `json:"ts"`
		Timestamp string `json:"timestamp"`
	}{kind, at, at})
	line := head[:len(head)-1] // without its closing brace
	if len(fields) > 2 {
		line = append(append(line, ','), fields[1:]...)
	} else {
		line = append(line, '}')
	}
	return append(line, '\n'), nil
}

func (r *Headless) LoopStarted(run engine.RunInfo) {
	hats := run.Hats
	if hats == nil {
		hats = []string{}
	}
	r.emit("started", headStarted{Spec: run.Spec, Tasks: run.Tasks, RunID: run.RunID, Resumed: run.Resumed, Config: run.Config,
		ObjectiveSource: run.Source, Hats: hats, MaxIterations: run.MaxIter, EventsFile: run.EventsFile})
}

func (r *Headless) IterationStarted(it engine.IterationInfo) {
	phase := "working"
	if it.Confirming {
		phase = "confirming"
	}
	r.emit("iteration", headIteration{N: it.N, Max: it.Max, Hat: it.Hat.ID, Backend: it.Backend, Phase: phase,
		Prompt: it.PromptFile, PromptBytes: it.PromptBytes, PromptSHA256: it.PromptSHA256})
}

func (r *Headless) Activity(it engine.IterationInfo, a events.Activity) {
	if a.Kind != events.ActivityTool {
		return
	}
	event, kind := toolEvent(a.Tool)
	r.emit(event, headTool{Type: kind, Iteration: it.N, Hat: it.Hat.ID, Name: a.ToolName, Path: a.Path, Command: a.Command})
}

// toolEvent is the event and type of a tool use: the specification's tool
// types are read, write and bash, and a program that switches on them
// must not meet another, so every other tool is a tool_other event.
func toolEvent(k events.ToolKind) (event, kind string) {
	switch k {
	case events.ToolRead, events.ToolWrite:
		return "tool", string(k)
	case events.ToolShell:
		return "tool", "bash"
	case events.ToolOther:
	}
	return "tool_other", string(events.ToolOther)
}

func (r *Headless) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	if to == nil {
		to = []string{}
	}
	payload := ev.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	r.emit("event", headEvent{Topic: ev.Topic, Hat: ev.Hat, Iteration: ev.Iteration, Source: ev.Source,
		To: to, As: as, Payload: payload})
}

func (r *Headless) EventRejected(ev events.Event, reason string) {
	code, detail := splitReason(reason)
	r.emit("rejected", headRejected{Topic: ev.Topic, Hat: ev.Hat, Iteration: ev.Iteration, Reason: code, Detail: detail})
}

// splitReason separates the engine's "code: detail" rejection text, so a
// program can switch on the code (scope_violation, reserved, …).
func splitReason(reason string) (code, detail string) {
	c, d, ok := strings.Cut(reason, ": ")
	if !ok || strings.ContainsAny(c, " \t") {
		return reason, ""
	}
	return c, d
}

// outcomeOf names an iteration's result the way iteration.finished does.
func outcomeOf(it engine.IterationInfo, res events.AgentResult) runfiles.Outcome {
	if it.Outcome != "" {
		return it.Outcome
	}
	switch {
	case res.Failure == events.FailureRateLimit:
		return runfiles.OutcomeRateLimited
	case res.Failed():
		return runfiles.OutcomeFailure
	}
	return runfiles.OutcomeSuccess
}

func (r *Headless) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	cost := iterationCost(it, res)
	r.emit("iteration_done", headIterationDone{N: it.N, Hat: it.Hat.ID, DurationMS: res.Duration.Milliseconds(),
		Tokens: tokensOf(res.Usage), Cost: knownCost(cost.USD, cost.Source == runfiles.CostUnknown), CostSource: cost.Source, Model: cost.Model,
		Stats:   headStats{Reads: res.Tools.Read, Writes: res.Tools.Write, Shell: res.Tools.Shell, Other: res.Tools.Other},
		Outcome: outcomeOf(it, res), Failure: res.Failure, Message: res.FailureMessage, ExitCode: res.ExitCode})
}

func (r *Headless) Commit(it engine.IterationInfo, c engine.Commit) {
	r.emit("commit", headCommit{Iteration: it.N, Hat: it.Hat.ID, Hash: c.Hash, Message: c.Subject})
}

func (r *Headless) RateLimited(it engine.IterationInfo, wait time.Duration) {
	r.emit("rate_limited", headRateLimited{N: it.N, Hat: it.Hat.ID, WaitMS: wait.Milliseconds()})
}

func (r *Headless) Paced(p runfiles.PacedRecord) {
	r.emit("paced", headPaced{Window: p.Window, Used: p.Used, Budget: p.Budget, Estimate: p.Estimate,
		Until: p.Until.UTC(), WaitMS: p.WaitMS, Oversize: p.Oversize})
}

// BackendSwitched reports that the run goes on with another backend.
func (r *Headless) BackendSwitched(_ engine.IterationInfo, sw runfiles.BackendSwitchedRecord) {
	r.emit("backend_switched", headBackendSwitched{N: sw.Iteration, Hat: sw.Hat, From: sw.From, To: sw.To,
		Reason: sw.Reason, ResetAt: sw.ResetAt, Message: sw.Message})
}

// WaveProgress reports that a wave started, or that one of its workers
// ended.
func (r *Headless) WaveProgress(it engine.IterationInfo, w runfiles.WaveProgress) {
	r.emit("wave", headWave{N: it.N, Hat: w.Hat, WaveID: w.ID, Workers: w.Total, Concurrency: w.Concurrency,
		Done: w.Done, Failed: w.Failed})
}

// TaskComplete reports a SPEC.md checkbox that became checked; index counts
// the spec's boxes from 0, in file order.
func (r *Headless) TaskComplete(index int, text string) {
	r.emit("task_complete", headTaskComplete{Index: index, Text: text})
}

// knownCost is usd, or nil when it is unknown: unknown is never a number
// a program could add up.
func knownCost(usd float64, unknown bool) *float64 {
	if unknown {
		return nil
	}
	return &usd
}

// Stuck reports that the run is ending because iterations stopped making
// progress; `ended` (reason stuck, exit 1) follows.
func (r *Headless) Stuck(end runfiles.Termination, withoutProgress int) {
	r.emit("stuck", headStuck{Reason: EndMessage(end), IterationsWithoutProgress: withoutProgress})
}

// Notice is for people; a program gets what the run did, not what it is
// about to do.
func (*Headless) Notice(string) {}

func (r *Headless) Warn(msg string) {
	r.emit("warning", headWarning{Message: msg})
}

// configured tells the reporter about the loaded config: its warnings,
// which the loader has already printed on stderr, go into the stream too.
func (r *Headless) Configured(warnings []string, stuckThreshold int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stuckThreshold = stuckThreshold
	for _, m := range warnings {
		r.emitLocked("warning", headWarning{Message: m})
	}
}

func (r *Headless) LoopFinished(sum engine.Summary) {
	run := r.model.Run()
	r.mu.Lock()
	defer r.mu.Unlock()
	if sum.Reason == runfiles.ReasonStuck && !run.Stuck {
		// The engine ended the run on its stuck check without calling
		// Stuck; a program waiting for `stuck` still gets it.
		r.emitLocked("stuck", headStuck{Reason: EndMessage(sum.End()), IterationsWithoutProgress: r.stuckThreshold})
	}
	c := completeOf(sum, max(len(run.Commits), sum.Commits))
	switch {
	case sum.Reason == runfiles.ReasonFatal:
		r.fatal = &c
	case r.ended:
	case sum.Reason == runfiles.ReasonCompleted:
		r.ended = true
		r.emitLocked("complete", c)
	default:
		r.ended = true
		r.emitLocked("ended", c)
	}
}

func completeOf(sum engine.Summary, commits int) headComplete {
	act := sum.Activations
	if act == nil {
		act = map[string]int{}
	}
	c := headComplete{RunID: sum.RunID, Reason: string(sum.Reason), ExitCode: sum.ExitCode, Message: EndMessage(sum.End()),
		Iterations: sum.Iterations, Confirmations: sum.Confirmations, TotalDurationMS: sum.Runtime.Milliseconds(),
		TasksDone: sum.TasksDone, Cost: knownCost(sum.Cost.USD, sum.Cost.Unknown), CostKnown: sum.Cost.USD,
		CostSource: sum.Cost.Source(), CostUnknown: sum.Cost.Unknown,
		Tokens: tokensOf(sum.Usage), Activations: act, EventsAccepted: sum.Accepted, EventsRejected: sum.Rejected,
		Commits: commits, EventsFile: sum.EventsFile}
	if len(sum.ByBackend) > 1 {
		c.ByBackend = map[string]headBackendTotal{}
		for name, t := range sum.ByBackend {
			c.ByBackend[name] = headBackendTotal{Iterations: t.Iterations, Tokens: tokensOf(t.Usage), CostUSD: t.CostUSD}
		}
	}
	if sum.AlreadyEnded {
		c.AlreadyEnded = true
		if !sum.EndedAt.IsZero() {
			at := sum.EndedAt.UTC()
			c.EndedAt = &at
		}
	}
	return c
}

// Failure is what the stream's `failed` line says of the error a command
// ended with: its text, how to fix it, and the exit status.
type Failure struct {
	Error    string
	Hint     string
	ExitCode int
}

// End ends the stream when the loop command is done: with `failed` for f,
// the command's error, when it has one. A run that ended as fatal without
// an error of its own fails with its message. Only the first End that
// writes a line counts.
func (r *Headless) End(f *Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	if f == nil {
		if r.fatal == nil {
			return
		}
		f = &Failure{Error: r.fatal.Message, ExitCode: exitcode.Fatal}
	}
	r.ended = true
	r.emitLocked("failed", headFailed{Error: f.Error, Hint: f.Hint, ExitCode: f.ExitCode, Run: r.fatal})
}
