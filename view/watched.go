package view

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// Watched is what runs in a workspace as its files say at one moment: a
// lone loop, or an autopilot with its slots, and the loop one of them runs.
// It is what `ralph watch` shows, and what view/api's Dashboard (`ralph
// serve`'s page) is made from. It is read from files only
// (WorkspaceReader): no lock is taken, nothing is written.
type Watched struct {
	Dir string
	// Autopilot is nil when the workspace shows a lone loop (or nothing).
	Autopilot *AutopilotRun
	Slots     []SlotView
	// Selected is the index in Slots of the slot whose loop Loop is; -1
	// for the workspace's own loop.
	Selected int
	// Loop is the selected loop; nil when none has started.
	Loop *LoopView
}

// AutopilotRun is an autopilot's run: its state file and the end of its
// event log.
type AutopilotRun struct {
	RunID     string
	Running   bool // a live process holds its lock
	Paused    bool
	Source    string
	Parallel  int
	MaxTasks  int
	Started   int
	Completed int
	Failed    int
	Queued    int // tasks in the merge queue
	// Reviews are the tasks delivered as pull requests that wait for a
	// person to merge them (deliver: pr).
	Reviews   []runfiles.TaskReview
	StartedAt time.Time
	Ended     *runfiles.AutopilotEnding
	Events    []EventLine
}

// SlotView is one active slot of an autopilot.
type SlotView struct {
	Slot, Task, Title string
	StartedAt         time.Time
	Attempt           int
	// Worker is the host of the worker running a remote task; "" here.
	Worker    string
	Hat       string
	Iteration int
	LastEvent string
	// Workspace is the loop's worktree, "" for a remote task; Log its
	// event log (the autopilot's copy, for a remote task).
	Workspace, Log string
}

// LoopView is one loop: its checkpoint, the end of its event log and its
// agents' activity.
type LoopView struct {
	// Workspace is where the loop runs, "" for a remote one; Launch is how
	// it was started (its config files and -H), nil when unknown.
	Workspace string
	Launch    *runfiles.Launch
	// Files is where the loop keeps its files: the workspace's .ralph/,
	// or a chain step's directory; "" for a remote loop.
	Files runfiles.Dir
	// Chain is the chain whose current step this loop is, nil for a loop
	// of its own.
	Chain *runfiles.ChainPlace
	// Run is what the run's header shows, as the live view of `ralph loop`
	// shows it (RenderRunPanel).
	Run       Run
	Objective string
	Running   bool
	// Worker is the host a remote loop runs on; its checkpoint and
	// activity are there, and only its event log is here.
	Worker string
	// Hats are the run's configured hats in config order; Hat (in Run) is
	// where the run is among them.
	Hats     []string
	Events   []EventLine
	Activity []runfiles.ActivityRecord
}

// EventLine is one event of a log, with what the event table would say of
// it. Err is set for a line that is not an event.
type EventLine struct {
	Offset int64
	Event  events.Event
	Text   string
	Err    error
}

// keepLines bounds what is kept of each log and activity file.
const keepLines = 500

// WorkspaceReader reads what runs in a workspace, again and again: it keeps
// its place in each log, so a read costs what was appended since.
type WorkspaceReader struct {
	dir  string
	host string
	// redactor hides the reader's secret values in the lines it keeps.
	redactor *redact.Redactor
	logs     map[string]*logTail
	acts     map[string]*activityTail
	hats     map[string][]string // log path → hats
	seen     map[string]bool     // the files the Read under way reads
}

// NewWorkspaceReader reads the workspace dir, hiding r's secret values in
// the logs' lines (see RedactRecord); a nil r hides nothing.
func NewWorkspaceReader(dir string, r *redact.Redactor) *WorkspaceReader {
	host, _ := os.Hostname()
	return &WorkspaceReader{dir: dir, host: host, redactor: r, logs: map[string]*logTail{}, acts: map[string]*activityTail{},
		hats: map[string][]string{}}
}

// Paths are the directories whose changes change what Read returns, for a
// watcher (fsnotify) to watch: .ralph/ of the workspace and of each slot's
// loop, and the selected run's directory under runs/.
func (w Watched) Paths() []string {
	ralph := filepath.Join(w.Dir, runfiles.DirName)
	paths := []string{ralph}
	if w.Autopilot != nil {
		paths = append(paths, runfiles.Dir(ralph).Control())
	}
	for _, s := range w.Slots {
		if s.Workspace != "" {
			paths = append(paths, filepath.Join(s.Workspace, runfiles.DirName))
		} else {
			paths = append(paths, filepath.Dir(s.Log))
		}
	}
	if l := w.Loop; l != nil && l.Chain != nil {
		// A chain's steps keep their files in their own directories:
		// the next step's appears under the chain's.
		paths = append(paths, runfiles.Dir(ralph).Chain(l.Chain.ID), l.Files.Path())
	}
	if l := w.Loop; l != nil && l.Run.ID != "" && l.Files != "" {
		paths = append(paths, l.Files.Run(l.Run.ID))
	}
	return paths
}

// Read reads the workspace as it is. task names the slot to select (by
// task id or slot), "" for the first; it is ignored for a lone loop. What
// it reads depends on the workspace's files alone, not on when it reads
// them: read twice with nothing changed, it is the same.
func (r *WorkspaceReader) Read(task string) Watched {
	w := Watched{Dir: r.dir, Selected: -1}
	r.seen = map[string]bool{}
	defer r.forgetUnseen()
	ap, slots, ok := r.readAutopilot()
	if !ok || (!ap.Running && r.loopIsNewer(ap)) {
		w.Loop = r.readOwnLoop()
		return w
	}
	w.Autopilot, w.Slots = ap, slots
	if len(slots) == 0 {
		return w
	}
	w.Selected = 0
	for i, s := range slots {
		if task != "" && (s.Task == task || s.Slot == task) {
			w.Selected = i
		}
	}
	s := slots[w.Selected]
	w.Loop = r.readLoop(s.Workspace, s.Log, s.Worker)
	return w
}

// forgetUnseen drops what is kept of the files the last Read did not
// read: the logs of tasks that left their slots.
func (r *WorkspaceReader) forgetUnseen() {
	for path := range r.logs {
		if !r.seen[path] {
			delete(r.logs, path)
			delete(r.hats, path)
		}
	}
	for path := range r.acts {
		if !r.seen[path] {
			delete(r.acts, path)
		}
	}
}

func (r *WorkspaceReader) readAutopilot() (*AutopilotRun, []SlotView, bool) {
	dir := filepath.Join(r.dir, runfiles.DirName)
	data, err := os.ReadFile(runfiles.Dir(dir).AutopilotState())
	if err != nil {
		return nil, nil, false
	}
	var st runfiles.AutopilotState
	if json.Unmarshal(data, &st) != nil {
		return nil, nil, false
	}
	ap := &AutopilotRun{RunID: st.RunID, Paused: st.Paused, Source: st.Source, Parallel: st.Parallel,
		MaxTasks: st.MaxTasks, Started: st.StartedCount, Completed: len(st.Completed), Failed: len(st.Failed),
		Queued: len(st.MergeQueue), Reviews: st.Reviews, StartedAt: st.StartedAt, Ended: st.Ended}
	ap.Running = r.alive(runfiles.Dir(dir).AutopilotLock())
	ap.Events = r.tail(runfiles.Dir(dir).AutopilotEvents(), true).lines
	var slots []SlotView
	for _, k := range slices.Sorted(maps.Keys(st.Active)) {
		a := st.Active[k]
		s := SlotView{Slot: k, Task: a.Task, Title: a.Title, StartedAt: a.StartedAt, Attempt: a.Attempt}
		if info, err := runfiles.ReadWorkerInfo(r.dir, a.Task); err == nil {
			s.Worker = info.Worker
		}
		if mirror := runfiles.In(r.dir).RemoteEvents(a.Task); fileExists(mirror) {
			s.Log = mirror
		} else {
			s.Workspace = a.Worktree
			if !filepath.IsAbs(s.Workspace) {
				s.Workspace = filepath.Join(r.dir, a.Worktree)
			}
			s.Log, _ = runfiles.CurrentLog(s.Workspace)
		}
		if s.Log != "" {
			t := r.tail(s.Log, false)
			s.Hat, s.Iteration, s.LastEvent = t.hat, t.iteration, t.lastEvent
			if n := len(t.lines); n > 0 && s.LastEvent == "" {
				s.LastEvent = t.lines[n-1].Event.Topic
			}
		}
		slots = append(slots, s)
	}
	return ap, slots, true
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// alive reports whether the lock file at path names a live process on
// this host. It reads the holder the lock file names and never tries the
// lock: a watcher must not take, even for an instant, a lock a starting
// run could want.
func (r *WorkspaceReader) alive(path string) bool {
	info, err := runfiles.ReadLockInfo(path)
	if err != nil || info.PID <= 0 || (info.Host != "" && info.Host != r.host) {
		return false
	}
	return runfiles.ProcessAlive(info.PID)
}

// ShowsAutopilot reports whether what runs in the workspace dir is its
// autopilot rather than its own loop: an autopilot runs there, or ran and
// started after the loop did. It is what Read decides.
func ShowsAutopilot(dir string) bool {
	data, err := os.ReadFile(runfiles.In(dir).AutopilotState())
	if err != nil {
		return false
	}
	var st runfiles.AutopilotState
	if json.Unmarshal(data, &st) != nil {
		return false
	}
	r := NewWorkspaceReader(dir, nil)
	return r.alive(runfiles.In(dir).AutopilotLock()) || !r.loopIsNewer(&AutopilotRun{StartedAt: st.StartedAt})
}

// loopIsNewer reports whether the workspace's own loop, rather than an
// autopilot that no longer runs, is what runs here: it runs, or it started
// after the autopilot did.
func (r *WorkspaceReader) loopIsNewer(ap *AutopilotRun) bool {
	if r.loopRunning(r.dir) {
		return true
	}
	st, _, err := runfiles.Checkpoint{Path: runfiles.In(r.dir).State()}.Load()
	return err == nil && st.StartedAt.After(ap.StartedAt)
}

func (r *WorkspaceReader) loopRunning(ws string) bool {
	return r.alive(runfiles.In(ws).Lock())
}

// readOwnLoop reads the workspace's loop: its own, or the current step's
// of the chain that runs there (ChainHere).
func (r *WorkspaceReader) readOwnLoop() *LoopView {
	place, step, ok := ChainHere(r.dir)
	if !ok {
		return r.readLoop(r.dir, "", "")
	}
	l := r.readLoopIn(step)
	if l != nil {
		l.Chain, l.Run.Chain = place, place.Where
	}
	return l
}

// readLoop reads the loop of workspace ws (its checkpoint, log and
// activity), or for a remote task, only its log at logPath.
func (r *WorkspaceReader) readLoop(ws, logPath, worker string) *LoopView {
	if ws == "" {
		return r.readRemoteLoop(logPath, worker)
	}
	return r.readLoopIn(runfiles.In(ws))
}

// readLoopIn reads the loop whose files are in d: a workspace's .ralph/,
// or a chain step's directory.
func (r *WorkspaceReader) readLoopIn(d runfiles.Dir) *LoopView {
	ws := d.Workspace()
	st, phase, err := runfiles.Checkpoint{Path: d.State()}.Load()
	if err != nil {
		return nil
	}
	l := &LoopView{Workspace: ws, Launch: st.Launch, Objective: st.Objective, Running: r.alive(d.Lock()), Files: d}
	path := filepath.Join(ws, st.EventsFile)
	t := r.tail(path, false)
	l.Events, l.Hats = t.lines, r.runHats(path)
	acts := r.activity(d.Activity(st.RunID))
	l.Activity = acts.records
	l.Run = runOf(st, phase, l.Running)
	if q, err := runfiles.PendingQuestionIn(d); err == nil && q != nil && st.Terminated == nil {
		// The checkpoint lags the log: the log past it says whether the
		// question is still open.
		l.Run.Phase, l.Run.Question = PhaseAwaitingHuman, q
	} else if l.Run.Phase == PhaseAwaitingHuman {
		l.Run.Phase, l.Run.Question = PhaseBetween, nil
	}
	l.Run.Backend, l.Run.Sandbox, l.Run.LastEvent = t.backend, t.sandbox, t.lastEvent
	if t.lastCommit != nil {
		l.Run.Commits = []engine.Commit{*t.lastCommit}
	}
	if l.Running && st.Running != nil {
		l.Run.Live = runningFigures(acts.iterations[st.Running.Iteration])
	}
	for n, f := range acts.iterations {
		if l.Run.Phase != PhaseRunning || n != l.Run.N {
			l.Run.Done.Tools = addTools(l.Run.Done.Tools, f.Tools)
		}
	}
	return l
}

func (r *WorkspaceReader) readRemoteLoop(path, worker string) *LoopView {
	t := r.tail(path, false)
	l := &LoopView{Worker: worker, Events: t.lines, Hats: r.runHats(path), Running: t.ended == nil && t.runID != ""}
	l.Run = Run{ID: t.runID, Started: t.started, N: t.iteration, Max: t.maxIter, Hat: t.hat, Backend: t.backend, Sandbox: t.sandbox, LastEvent: t.lastEvent,
		Phase: PhaseBetween, Ended: t.ended, Done: t.done}
	l.Objective = t.objective
	if t.running {
		l.Run.Phase, l.Run.PhaseSince, l.Run.Live = PhaseRunning, t.iterationAt, runningFigures(Figures{})
	}
	return l
}

// runOf is the header's Run of a loop from its checkpoint.
func runOf(st *runfiles.RunState, phase runfiles.Phase, running bool) Run {
	run := Run{ID: st.RunID, N: st.Iteration, Max: st.MaxIterations,
		Done:  Figures{Usage: st.Usage, CostUSD: st.CostUSD, CostComputed: st.CostComputed, CostUnknown: st.CostUnknown},
		Ended: st.Terminated, Gone: !running && st.Terminated == nil, ByBackend: st.ByBackend, Backend: st.ChainBackend[""]}
	run.Started, run.Stopped = runClock(st, running)
	if f := st.LastFinished; f != nil {
		run.Hat, run.LastOutcome, run.Phase = f.Hat, f.Outcome, PhaseBetween
	}
	if st.Running != nil {
		run.Hat = st.Running.Hat // cut off, it runs again on resume
		if st.Running.Backend != "" {
			run.Backend = st.Running.Backend
		}
	}
	if st.Wave != nil {
		p := st.Wave.Progress()
		run.Wave = &p
	}
	switch {
	case st.Running != nil && running:
		run.N, run.Hat, run.Confirming = st.Running.Iteration, st.Running.Hat, st.Running.Confirming
		run.Phase, run.PhaseSince = PhaseRunning, st.Running.StartedAt
	case phase == runfiles.PhaseWaiting && running:
		run.Phase, run.WaitUntil = PhaseWaiting, st.RateLimitedUntil
	case phase == runfiles.PhasePacing && running && st.Paced != nil:
		run.Phase, run.Paced = PhasePaced, st.Paced
	}
	return run
}

// runClock is when a run read from its checkpoint started, as if it had
// run its elapsed time without a break, and when its clock stopped (zero
// while it runs). Both are instants of the run's, not the reader's now: a
// run that does not move reads the same each time, so a stream of its
// dashboard has nothing new to send.
func runClock(st *runfiles.RunState, running bool) (started, stopped time.Time) {
	if running && !st.SegmentStart.IsZero() {
		return st.SegmentStart.Add(-st.PriorRuntime), time.Time{}
	}
	elapsed := st.PriorRuntime
	switch {
	case !st.SegmentStart.IsZero():
		// Killed: its clock stopped at its last line, as a resume counts it.
		stopped = st.SegmentStart
		if st.LastEventAt.After(stopped) {
			stopped = st.LastEventAt
			elapsed += stopped.Sub(st.SegmentStart)
		}
	case st.Terminated != nil:
		stopped = st.Terminated.At
	case st.Question != nil:
		stopped = st.Question.AskedAt
	}
	if stopped.IsZero() {
		stopped = st.LastEventAt
	}
	if stopped.IsZero() {
		return time.Time{}, time.Time{} // no line says when
	}
	return stopped.Add(-elapsed), stopped
}

func (r *WorkspaceReader) runHats(path string) []string {
	if h, ok := r.hats[path]; ok {
		return h
	}
	// Read once per log, found or not: a log that names no hats (written
	// before ralph recorded them) would otherwise be read whole at every
	// refresh.
	ids, _, err := runfiles.RunHats(path)
	if err == nil && fileExists(path) {
		r.hats[path] = ids
	}
	return ids
}

// logTail is what is kept of one event log: its last lines and what its
// lines so far say of the run.
type logTail struct {
	reader    *events.Reader
	autopilot bool
	lines     []EventLine

	runID, objective, hat, backend, sandbox, lastEvent string
	iteration, maxIter                                 int
	running                                            bool // an iteration started and has not finished
	started, iterationAt                               time.Time
	ended                                              *runfiles.Termination
	lastCommit                                         *engine.Commit
	// done is what the run's finished iterations spent, as their
	// iteration.finished lines say: a remote loop has no checkpoint here.
	done Figures
}

func (r *WorkspaceReader) tail(path string, isAutopilot bool) *logTail {
	r.seen[path] = true
	t, ok := r.logs[path]
	if !ok {
		t = &logTail{reader: events.NewReader(path, 0), autopilot: isAutopilot}
		r.logs[path] = t
	}
	recs, err := t.reader.Read()
	if err != nil {
		return t
	}
	for _, rec := range recs {
		shown, _ := RedactRecord(r.redactor, rec)
		t.add(shown)
	}
	if len(t.lines) > keepLines {
		t.lines = slices.Clone(t.lines[len(t.lines)-keepLines:])
	}
	return t
}

func (t *logTail) add(rec events.Record) {
	line := EventLine{Offset: rec.Offset, Event: rec.Event, Err: rec.Err}
	if rec.Err != nil {
		line.Text = string(rec.Line)
		t.lines = append(t.lines, line)
		return
	}
	ev := rec.Event
	line.Text = EventText(ev, t.autopilot)
	if !t.autopilot {
		t.note(ev)
	}
	t.lines = append(t.lines, line)
}

// note folds what the header needs of a loop's line.
func (t *logTail) note(ev events.Event) {
	if ev.Source != events.SourceRalph {
		return
	}
	switch ev.Topic {
	case runfiles.TopicLoopStarted:
		var p viewLoopStarted
		if decodeView(ev, &p) {
			t.runID, t.objective, t.started, t.maxIter = p.RunID, p.Objective, ev.TS, p.MaxIter
		}
		t.ended, t.running, t.done = nil, false, Figures{}
	case runfiles.TopicLoopResumed:
		t.ended, t.running = nil, false
	case runfiles.TopicIterationStarted:
		var p viewIterationStarted
		if decodeView(ev, &p) {
			t.hat, t.backend = p.Hat, p.Backend
			if p.Sandbox != "" {
				t.sandbox = p.Sandbox
			}
		}
		t.iteration, _ = Who(ev)
		t.running, t.iterationAt = true, ev.TS
	case runfiles.TopicIterationFinished:
		t.running = false
		var p viewIterationFinished
		if decodeView(ev, &p) {
			spent := costFigures(runfiles.CostTotal{}.Add(p.cost()))
			spent.Usage = p.Tokens
			t.done = t.done.Add(spent)
		}
	case runfiles.TopicEventRouted:
		var p viewRouted
		if decodeView(ev, &p) {
			t.lastEvent = routeText(p.Topic, p.To, p.As)
		}
	case runfiles.TopicEventRejected:
		var p viewRejected
		if decodeView(ev, &p) {
			t.lastEvent = p.Topic + " rejected (" + p.Reason + ")"
		}
	case runfiles.TopicCommit:
		var p viewCommit
		if decodeView(ev, &p) {
			t.lastCommit = &engine.Commit{Hash: p.Hash, Subject: p.Subject}
		}
	case runfiles.TopicLoopTerminate:
		var p viewTerminate
		if decodeView(ev, &p) {
			t.ended = &runfiles.Termination{Reason: p.Reason, ExitCode: p.ExitCode, Message: p.Message, Cause: p.Cause, GoOn: p.GoOn}
		}
		t.running = false
	}
}

// activityTail is what is kept of a run's activity.jsonl: its last
// records and each iteration's figures.
type activityTail struct {
	offset     int64
	records    []runfiles.ActivityRecord
	iterations map[int]Figures
}

func (r *WorkspaceReader) activity(path string) *activityTail {
	if r.seen != nil {
		r.seen[path] = true
	}
	a, ok := r.acts[path]
	if !ok {
		a = &activityTail{iterations: map[int]Figures{}}
		r.acts[path] = a
	}
	a.offset = runfiles.ReadActivity(path, a.offset, func(rec runfiles.ActivityRecord) {
		a.add(rec)
		if len(a.records) > 2*keepLines {
			a.trim() // as it goes: a run's activity may be long
		}
	})
	a.trim()
	return a
}

// trim keeps the last keepLines records.
func (a *activityTail) trim() {
	if len(a.records) > keepLines {
		a.records = slices.Clone(a.records[len(a.records)-keepLines:])
	}
}

func (a *activityTail) add(rec runfiles.ActivityRecord) {
	f := a.iterations[rec.Iteration]
	switch rec.Kind {
	case events.ActivityUsage:
		if rec.Tokens != nil {
			f.Usage = f.Usage.Add(*rec.Tokens)
		}
		f.CostUSD += rec.CostUSD
	case events.ActivityTool:
		f.Tools.Count(rec.Tool)
		a.records = append(a.records, rec)
	case events.ActivityText, events.ActivityError, events.ActivityRateLimit, events.ActivityWarning:
		a.records = append(a.records, rec)
	}
	a.iterations[rec.Iteration] = f
}
