package engine

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/runfiles"
)

// testPrices prices "m" at $1 per million input tokens and $2 per million
// output, and a premium request at $0.04.
func testPrices() *pricing.Table {
	return (&pricing.Table{}).With([]pricing.Price{
		{Model: "m", Input: 1, Output: 2},
		{Model: "copilot", PerRequest: 0.04},
	})
}

// configuredBackend is a fakeBackend with what backends.Backend says about
// cost: its configured model, whether it reports cost and names its model.
type configuredBackend struct {
	*fakeBackend
	model       string
	reportsCost bool
	namesModel  bool
}

func (b configuredBackend) ConfiguredModel() string { return b.model }
func (b configuredBackend) ReportsCost() bool       { return b.reportsCost }
func (b configuredBackend) NamesModel() bool        { return b.namesModel }

func TestPriceIteration(t *testing.T) {
	million := events.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	plain := &fakeBackend{}
	cases := []struct {
		name string
		res  events.AgentResult
		b    Backend
		want runfiles.IterationCost
	}{
		{"the CLI's own cost wins", events.AgentResult{CostUSD: 0.5, Usage: million, Model: "m"}, plain,
			runfiles.IterationCost{USD: 0.5, Source: runfiles.CostReported, Model: "m"}},
		{"computed from the model the output names", events.AgentResult{Usage: million, Model: "m"}, plain,
			runfiles.IterationCost{USD: 3, Source: runfiles.CostComputed, Model: "m"}},
		{"the configured model when the output names none", events.AgentResult{Usage: million},
			configuredBackend{fakeBackend: plain, model: "m"}, runfiles.IterationCost{USD: 3, Source: runfiles.CostComputed, Model: "m"}},
		{"the output's model over the configured one", events.AgentResult{Usage: million, Model: "other"},
			configuredBackend{fakeBackend: plain, model: "m"}, runfiles.IterationCost{Source: runfiles.CostUnknown, Model: "other"}},
		{"no model at all is unknown, not free", events.AgentResult{Usage: million}, plain,
			runfiles.IterationCost{Source: runfiles.CostUnknown}},
		{"premium requests at the copilot row", events.AgentResult{Usage: million, Model: "claude-sonnet-4.5", Requests: 3}, plain,
			runfiles.IterationCost{USD: 0.12, Source: runfiles.CostComputed, Model: "claude-sonnet-4.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := priceIteration(testPrices(), c.res, c.b)
			assert.InDelta(t, c.want.USD, got.USD, 1e-9)
			got.USD = c.want.USD
			assert.Equal(t, c.want, got)
		})
	}
}

// costReporter keeps the warnings a run gives.
type costReporter struct {
	nopReporter
	mu    sync.Mutex
	warns []string
	sum   Summary
}

func (w *costReporter) Warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warns = append(w.warns, msg)
}

func (w *costReporter) LoopFinished(s Summary) { w.sum = s }

func (w *costReporter) matching(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.warns {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

func finishedRecords(t *testing.T, dir string) []runfiles.IterationFinishedRecord {
	t.Helper()
	var out []runfiles.IterationFinishedRecord
	for _, rec := range readLog(t, dir) {
		if rec.Err == nil && rec.Event.Topic == runfiles.TopicIterationFinished {
			var r runfiles.IterationFinishedRecord
			require.NoError(t, json.Unmarshal(rec.Event.Payload, &r))
			out = append(out, r)
		}
	}
	return out
}

// TestComputedCostEndsTheRunAtMaxCost: an agent that reports no cost is
// priced from its tokens, and max_cost_usd ends the run after the
// iteration that crosses it; a resume of that run ends at once.
func TestComputedCostEndsTheRunAtMaxCost(t *testing.T) {
	dir := t.TempDir()
	// 0.6 of a million output tokens at $2: $1.20 an iteration.
	agentTurn := turn{result: events.AgentResult{Model: "m", Usage: events.Usage{OutputTokens: 600_000}}}
	b := &fakeBackend{turns: []turn{agentTurn}}
	s := settings()
	s.MaxCostUSD = 2
	withPrices := func(o *Options) { o.Prices = testPrices() }
	out, err := newTestEngine(t, dir, b, s, withPrices).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxCost, out.Reason)
	assert.Equal(t, 2, out.ExitCode)
	assert.Equal(t, 2, out.Iterations, "$1.20 after one, $2.40 after two")
	for _, r := range finishedRecords(t, dir) {
		assert.Equal(t, runfiles.CostComputed, r.CostSource)
		assert.Equal(t, "m", r.Model)
		assert.InDelta(t, 1.2, r.CostUSD, 1e-9)
	}

	b2 := &fakeBackend{turns: []turn{agentTurn}}
	out, err = newTestEngine(t, dir, b2, s, withPrices, func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxCost, out.Reason, "a resumed run already over its cost ends at once")
	assert.Empty(t, b2.hats, "no agent ran")
}

// TestUnknownCostIsNeverZero: a model with no price warns once a run,
// naming the model and the key to set, and the run's cost is unknown in
// its state, status and summary.
func TestUnknownCostIsNeverZero(t *testing.T) {
	dir := t.TempDir()
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build it"), result: events.AgentResult{Model: "mystery", Usage: events.Usage{InputTokens: 10}}}},
		"builder":  {{emit: []events.Event{ev("build.done", "ok")}, result: events.AgentResult{Model: "mystery", Usage: events.Usage{InputTokens: 10}}}},
		"reviewer": {{text: tagged("LOOP_COMPLETE", "done"), result: events.AgentResult{Model: "m", Usage: events.Usage{InputTokens: 1_000_000}}}},
	}}
	rep := &costReporter{}
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Prices, o.Reporter = testPrices(), rep }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 1, rep.matching("no price for model mystery"), "warned once: %q", rep.warns)
	assert.Equal(t, 1, rep.matching("pricing: {mystery: {input: …, output: …}}"))
	assert.Equal(t, runfiles.CostTotal{USD: 1, Computed: true, Unknown: true}, rep.sum.Cost)

	st, err := runfiles.ReadStatus(dir, 0, time.Now())
	require.NoError(t, err)
	assert.True(t, st.CostUnknown)
	assert.Equal(t, runfiles.CostComputed, st.CostSource)
	recs := finishedRecords(t, dir)
	require.Len(t, recs, 3)
	assert.Equal(t, runfiles.CostUnknown, recs[0].CostSource)
	assert.Equal(t, "mystery", recs[0].Model)
}

func TestCostLimitWarnings(t *testing.T) {
	plain := &fakeBackend{}
	unpriced := configuredBackend{fakeBackend: plain, model: "mystery"}
	priced := configuredBackend{fakeBackend: plain, model: "m"}
	silent := configuredBackend{fakeBackend: plain}
	named := configuredBackend{fakeBackend: plain, namesModel: true}
	reports := configuredBackend{fakeBackend: plain, model: "mystery", reportsCost: true}

	assert.Empty(t, CostLimitWarnings(0, testPrices(), unpriced), "no limit, nothing to enforce")
	assert.Empty(t, CostLimitWarnings(5, testPrices(), priced, named, reports, plain))
	w := CostLimitWarnings(5, testPrices(), unpriced, unpriced, silent)
	require.Len(t, w, 2, "%q", w)
	assert.Contains(t, w[0], "max_cost_usd cannot be enforced for backend fake: ralph has no price for model mystery")
	assert.Contains(t, w[0], "pricing: {mystery: {input: …, output: …}}")
	assert.Contains(t, w[1], "set cli.model")
}

// TestUnknownModelWarning: tokens from an agent that names no model ask
// for cli.model; a plain command (no model, no tokens) gets no warning,
// though its cost is still unknown.
func TestUnknownModelWarning(t *testing.T) {
	for _, c := range []struct {
		name  string
		usage events.Usage
		warns int
	}{{"tokens", events.Usage{InputTokens: 5}, 1}, {"a plain command", events.Usage{}, 0}} {
		t.Run(c.name, func(t *testing.T) {
			rep := &costReporter{}
			b := &fakeBackend{turns: []turn{{result: events.AgentResult{Usage: c.usage}}}}
			s := settings()
			s.MaxIterations = 2
			out, err := newTestEngine(t, t.TempDir(), b, s, func(o *Options) { o.Prices, o.Reporter = testPrices(), rep }).Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, c.warns, rep.matching("set cli.model"), "%q", rep.warns)
			assert.Equal(t, runfiles.CostTotal{Unknown: true}, out.Cost)
		})
	}
}
