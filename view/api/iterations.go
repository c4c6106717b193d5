package api

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Iteration is one finished iteration of a loop, as its iteration.finished
// line records it.
type Iteration struct {
	Iteration  int              `json:"iteration"`
	Hat        string           `json:"hat"`
	Outcome    runfiles.Outcome `json:"outcome"`
	ExitCode   int              `json:"exit_code"`
	Message    string           `json:"message,omitempty"`
	DurationMS int64            `json:"duration_ms"`
	Tokens     events.Usage     `json:"tokens"`
	CostUSD    float64          `json:"cost_usd"`
	// CostSource is how CostUSD is known: reported, computed or unknown
	// ("" in a log from before ralph priced iterations: reported).
	CostSource runfiles.CostSource `json:"cost_source,omitempty"`
	// CostText is the iteration's cost as people read it, and RunCostText
	// the run's up to and with this iteration (view.CostText): "unknown"
	// is never a number, so the page shows these and formats no cost.
	CostText    string    `json:"cost_text"`
	RunCostText string    `json:"run_cost_text"`
	Model       string    `json:"model,omitempty"`
	FinishedAt  time.Time `json:"finished_at"`
}

// Iterations is the finished iterations of the loop log q picks in the
// workspace dir (only its log: its filters are for events), in log order,
// with r's secret values hidden.
func Iterations(ctx context.Context, dir string, q EventQuery, r *redact.Redactor) ([]Iteration, error) {
	path, err := q.LogPath(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	its := []Iteration{}
	var total runfiles.CostTotal
	err = events.Scan(f, func(rec events.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rec.Err != nil || rec.Event.Topic != runfiles.TopicIterationFinished || rec.Event.Source != events.SourceRalph {
			return nil
		}
		rec, _ = view.RedactRecord(r, rec)
		var it Iteration
		if json.Unmarshal(rec.Event.Payload, &it) != nil {
			return nil
		}
		it.FinishedAt = rec.Event.TS
		cost := it.cost()
		total = total.Add(cost)
		it.CostText, it.RunCostText = view.CostText(runfiles.CostTotal{}.Add(cost)), view.CostText(total)
		its = append(its, it)
		return nil
	})
	return its, err
}

// cost is the iteration's cost; a line from before ralph priced
// iterations has no source, and its cost was reported.
func (it Iteration) cost() runfiles.IterationCost {
	if it.CostSource == "" {
		return runfiles.IterationCost{USD: it.CostUSD, Source: runfiles.CostReported}
	}
	return runfiles.IterationCost{USD: it.CostUSD, Source: it.CostSource}
}
