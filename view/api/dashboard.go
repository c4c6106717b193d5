package api

import (
	"sync"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Dashboard is what runs in a workspace at one moment, as a web page
// shows it: the autopilot and its slots, or a lone loop, and the loop of
// the slot selected. It is the view's model of a workspace (view.Watched)
// in the API's words.
type Dashboard struct {
	Kind      Kind            `json:"kind"`
	Autopilot *AutopilotPanel `json:"autopilot,omitempty"`
	Slots     []Slot          `json:"slots"`
	// Selected is the task whose loop Loop is, "" for the workspace's own.
	Selected string `json:"selected,omitempty"`
	Loop     *Loop  `json:"loop,omitempty"`
}

// AutopilotPanel is an autopilot's run and its counts.
type AutopilotPanel struct {
	RunID     string                    `json:"run_id"`
	Running   bool                      `json:"running"`
	Paused    bool                      `json:"paused"`
	Source    string                    `json:"source,omitempty"`
	Parallel  int                       `json:"parallel"`
	MaxTasks  int                       `json:"max_tasks,omitempty"`
	Started   int                       `json:"started"`
	Completed int                       `json:"completed"`
	Failed    int                       `json:"failed"`
	Queued    int                       `json:"merge_queue"`
	Reviews   []Review                  `json:"reviews,omitempty"`
	StartedAt time.Time                 `json:"started_at"`
	Ended     *runfiles.AutopilotEnding `json:"ended,omitempty"`
}

// Review is a task delivered as a pull request that waits for a person
// to merge it.
type Review struct {
	Task   string `json:"task"`
	Title  string `json:"title,omitempty"`
	Number int    `json:"number"`
	// Name is what its forge's people call it: "pull request #12",
	// "merge request !12".
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Slot is an autopilot's slot and the task its loop works on.
type Slot struct {
	Slot      string    `json:"slot"`
	Task      string    `json:"task"`
	Title     string    `json:"title,omitempty"`
	Worker    string    `json:"worker,omitempty"` // the host of a remote task's worker
	Hat       string    `json:"hat,omitempty"`
	Iteration int       `json:"iteration"`
	Attempt   int       `json:"attempt"`
	StartedAt time.Time `json:"started_at"`
	LastEvent string    `json:"last_event,omitempty"`
}

// Loop is one loop: its run's header, its hats and where it is among
// them, and what its agent did last.
type Loop struct {
	RunID string `json:"run_id"`
	// Chain is the chain whose current step this loop is (`ralph chain
	// run`); absent for a loop of its own.
	Chain         *runfiles.ChainPlace `json:"chain,omitempty"`
	Objective     string               `json:"objective,omitempty"`
	Running       bool                 `json:"running"`
	Worker        string               `json:"worker,omitempty"`
	Iteration     int                  `json:"iteration"`
	MaxIterations int                  `json:"max_iterations,omitempty"`
	Hat           string               `json:"hat,omitempty"`
	Backend       string               `json:"backend,omitempty"`
	// Sandbox is how the agent is confined: "landlock", "bwrap, network
	// deny", "off"; absent when the log does not say.
	Sandbox    string    `json:"sandbox,omitempty"`
	Phase      string    `json:"phase"`
	PhaseSince time.Time `json:"phase_since,omitzero"`
	// Started is when the run started, as if it had run its elapsed time
	// without a break; Stopped when its clock stopped (it ended, waits for
	// an answer, or no process runs it), absent while it runs. Its elapsed
	// time is Stopped, or now, less Started.
	Started time.Time `json:"started,omitzero"`
	Stopped time.Time `json:"stopped,omitzero"`
	// Tokens and CostUSD are the run's, the running iteration's so far
	// included.
	Tokens  events.Usage `json:"tokens"`
	CostUSD float64      `json:"cost_usd"`
	// CostSource and CostUnknown say how CostUSD is known, as in `ralph
	// status`: unknown is never shown as $0.
	CostSource  runfiles.CostSource `json:"cost_source,omitempty"`
	CostUnknown bool                `json:"cost_unknown,omitempty"`
	CostText    string              `json:"cost_text"`
	// ByBackend is what each backend's finished iterations used, when a
	// fallback chain (cli.fallback) moved the run between backends;
	// ByBackendText words it as ralph does.
	ByBackend     map[string]runfiles.BackendTotal `json:"by_backend,omitempty"`
	ByBackendText string                           `json:"by_backend_text,omitempty"`
	LastEvent     string                           `json:"last_event,omitempty"`
	// Question is what the run waits on a person to answer.
	Question *runfiles.Question `json:"question,omitempty"`
	// Paced is the pacing budget the run waits for before its next
	// iteration (phase paced), and PacedText that wait in words.
	Paced     *runfiles.PacedRecord `json:"paced,omitempty"`
	PacedText string                `json:"paced_text,omitempty"`
	// Wave is the wave the iteration runs (a hat with concurrency), and
	// WaveText how it is going in words.
	Wave     *runfiles.WaveProgress `json:"wave,omitempty"`
	WaveText string                 `json:"wave_text,omitempty"`
	Ended    *runfiles.Termination  `json:"ended,omitempty"`
	// Gone says no process runs the loop, though it has not ended: it
	// was killed, and goes on with `ralph loop --resume`.
	Gone     bool                      `json:"gone,omitempty"`
	Hats     []string                  `json:"hats"`
	Graph    *hats.Graph               `json:"graph,omitempty"`
	Activity []runfiles.ActivityRecord `json:"activity"`
}

// Reader reads a workspace's Dashboard again and again, each read costing
// what its files gained since the last. It is safe for concurrent use.
type Reader struct {
	mu     sync.Mutex
	reader *view.WorkspaceReader
	graphs Graphs
	paths  []string
}

// NewReader reads the workspace dir, hiding r's secret values in what it
// shows of the logs; a nil r hides nothing.
func NewReader(dir string, r *redact.Redactor) *Reader {
	return &Reader{reader: view.NewWorkspaceReader(dir, r), graphs: Graphs{}}
}

// Dashboard reads the workspace, its task's slot selected ("" for the
// first).
func (r *Reader) Dashboard(task string) Dashboard {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.reader.Read(task)
	r.paths = w.Paths()
	d := Dashboard{Kind: KindNone, Slots: []Slot{}}
	if w.Autopilot != nil {
		d.Kind, d.Autopilot = KindAutopilot, autopilotPanel(w.Autopilot)
		for _, s := range w.Slots {
			d.Slots = append(d.Slots, Slot{Slot: s.Slot, Task: s.Task, Title: s.Title, Worker: s.Worker, Hat: s.Hat,
				Iteration: s.Iteration, Attempt: s.Attempt, StartedAt: s.StartedAt, LastEvent: s.LastEvent})
		}
		if w.Selected >= 0 && w.Selected < len(w.Slots) {
			d.Selected = w.Slots[w.Selected].Task
		}
	} else if w.Loop != nil {
		d.Kind = KindLoop
	}
	if w.Loop != nil {
		d.Loop = r.loop(w.Loop)
	}
	return d
}

// Paths are the directories whose changes change the last Dashboard read,
// for a watcher (fsnotify) to watch.
func (r *Reader) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths
}

func autopilotPanel(a *view.AutopilotRun) *AutopilotPanel {
	p := &AutopilotPanel{RunID: a.RunID, Running: a.Running, Paused: a.Paused, Source: a.Source, Parallel: a.Parallel,
		MaxTasks: a.MaxTasks, Started: a.Started, Completed: a.Completed, Failed: a.Failed, Queued: a.Queued,
		StartedAt: a.StartedAt, Ended: a.Ended}
	for _, r := range a.Reviews {
		p.Reviews = append(p.Reviews, Review{Task: r.Task, Title: r.Title, Number: r.PR.Number, Name: r.PR.Name(), URL: r.PR.URL})
	}
	return p
}

func (r *Reader) loop(l *view.LoopView) *Loop {
	run := l.Run
	total := run.Total()
	lp := &Loop{RunID: run.ID, Chain: l.Chain, Objective: l.Objective, Running: l.Running, Worker: l.Worker, Iteration: run.N,
		MaxIterations: run.Max, Hat: run.Hat, Backend: run.Backend, Sandbox: run.Sandbox, Phase: string(run.Phase), PhaseSince: run.PhaseSince,
		Started: run.Started, Stopped: run.Stopped, Tokens: total.Usage, CostUSD: total.CostUSD,
		CostSource: total.Cost().Source(), CostUnknown: total.CostUnknown, CostText: view.CostText(total.Cost()), LastEvent: run.LastEvent,
		Question: run.Question, Ended: run.Ended, Gone: run.Gone, Hats: l.Hats, Graph: r.graphs.Of(l),
		Activity: l.Activity}
	if run.Paced != nil {
		lp.Paced, lp.PacedText = run.Paced, view.PacedText(*run.Paced)
	}
	if run.Wave != nil {
		lp.Wave, lp.WaveText = run.Wave, view.WaveText(*run.Wave)
	}
	if text := view.BackendList(run.ByBackend); text != "" {
		lp.ByBackend, lp.ByBackendText = run.ByBackend, text
	}
	if run.Ended != nil {
		ended := *run.Ended
		ended.Message = view.EndMessage(ended)
		lp.Ended = &ended
	}
	if lp.Hats == nil {
		lp.Hats = []string{}
	}
	if lp.Activity == nil {
		lp.Activity = []runfiles.ActivityRecord{}
	}
	return lp
}
