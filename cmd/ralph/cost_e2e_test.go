package main

// TestE2EAgentCost runs `ralph loop` through a real agent CLI that reports
// no cost (pi) against the scripted fake model, whose name has no price in
// ralph's table: without a pricing: entry the cost is unknown and
// max_cost_usd cannot be enforced, and ralph says so; with one, every
// iteration is priced from its tokens and max_cost_usd ends the run after
// the iteration that crosses it. Like TestE2EAgent it needs
// RALPH_AGENTS_DIR.

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

// costCLI is the agent the test drives: quick to start, and it reports no
// cost for a model its own tables do not know.
const costCLI = "pi"

// costPrices are the test's figures for the fake model, per million tokens.
const costInputPrice, costOutputPrice = 100.0, 400.0

// costScript: the builder writes a file and publishes build.done; the
// reviewer does not complete, so only a limit ends the run.
func costScript() fakemodel.Script {
	return fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "I will write hello.txt.", Tools: []fakemodel.ToolCall{
			{Write: &fakemodel.WriteCall{Path: "hello.txt", Content: agentHello}}}},
		{Tools: []fakemodel.ToolCall{
			{Shell: &fakemodel.ShellCall{Command: emitCommand(costCLI) + ` emit build.done "hello.txt written"`}}}},
		{Text: "hello.txt is written and build.done is published."},
		{Text: "Not reviewed yet."},
	}}
}

// costConfig is agentLoopConfig's hats with limits and, when pricing is
// not "", a pricing: section.
func costConfig(bin, limits, pricing string) string {
	return fmt.Sprintf(`event_loop:
  prompt: Write hello.txt, then have it reviewed.
  starting_event: task.start
  completion_confirmations: 1
  max_consecutive_failures: 1
%shats:
  builder:
    name: Builder
    triggers: [task.start]
    publishes: [build.done]
    instructions: Write hello.txt and publish build.done.
  reviewer:
    name: Reviewer
    triggers: [build.done]
    publishes: [LOOP_COMPLETE]
    instructions: Check hello.txt.
cli:
  backend: %s
  command: %s
%s%s`, limits, costCLI, bin, agentBackend[costCLI], pricing)
}

// pricedIteration is what the test reads of an iteration.finished.
type pricedIteration struct {
	Hat        string  `json:"hat"`
	CostUSD    float64 `json:"cost_usd"`
	CostSource string  `json:"cost_source"`
	Model      string  `json:"model"`
	Tokens     struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_tokens"`
		CacheWrite int64 `json:"cache_write_tokens"`
	} `json:"tokens"`
}

// atTestPrices is what the iteration's tokens cost at the test's figures
// (no cache prices: cached tokens cost as input).
func (p pricedIteration) atTestPrices() float64 {
	in := p.Tokens.Input + p.Tokens.CacheRead + p.Tokens.CacheWrite
	return (float64(in)*costInputPrice + float64(p.Tokens.Output)*costOutputPrice) / 1e6
}

func (w *workspace) pricedIterations() []pricedIteration {
	w.t.Helper()
	var out []pricedIteration
	for _, rec := range w.events() {
		if rec.Err == nil && rec.Event.Topic == "iteration.finished" {
			var p pricedIteration
			require.NoError(w.t, json.Unmarshal(rec.Event.Payload, &p))
			out = append(out, p)
		}
	}
	return out
}

func TestE2EAgentCost(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	bin := agentBinary(t, dir, costCLI)
	run := func(t *testing.T, config string) (*workspace, agentResult) {
		srv := fakemodel.New(costScript())
		url, err := srv.Start()
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.Close() })
		w := newWorkspace(t)
		w.write("ralph.yml", config)
		r := w.ralphAgent(costCLI, url, "loop", "-c", "ralph.yml")
		t.Logf("%s: exit %d in %s", costCLI, r.code, r.elapsed.Round(100*time.Millisecond))
		t.Cleanup(func() {
			if t.Failed() {
				logAgentRun(t, w, srv, r)
			}
		})
		return w, r
	}

	// Without a price: two iterations, their cost unknown, and warnings
	// from validate and from the loop that max_cost_usd cannot stop it.
	unpricedConfig := costConfig(bin, "  max_iterations: 2\n  max_cost_usd: 1000\n", "")
	w, r := run(t, unpricedConfig)
	cannot := "max_cost_usd cannot be enforced for backend pi: ralph has no price for model fake-model"
	assert.Contains(t, w.ralph("validate", "-c", "ralph.yml").stderr, cannot, "ralph validate")
	require.Equal(t, 2, r.code, "max_iterations; stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, cannot, "the start of ralph loop")
	assert.Contains(t, r.stderr, "pricing: {fake-model: {input: …, output: …}}")
	assert.Contains(t, r.stderr, "tokens, unknown;", "the summary says the cost is unknown, not $0.0000")
	assert.Contains(t, w.ralph("status").stdout, "cost: unknown\n")
	var status struct {
		CostUSD     float64 `json:"cost_usd"`
		CostSource  string  `json:"cost_source"`
		CostUnknown bool    `json:"cost_unknown"`
	}
	require.NoError(t, json.Unmarshal([]byte(w.ralph("status", "--json").stdout), &status))
	assert.Equal(t, "unknown", status.CostSource)
	assert.True(t, status.CostUnknown)
	unpriced := w.pricedIterations()
	require.Len(t, unpriced, 2)
	for _, p := range unpriced {
		assert.Equal(t, "unknown", p.CostSource)
		assert.Equal(t, "fake-model", p.Model)
		assert.Zero(t, p.CostUSD)
	}

	// With a price, a limit above the first iteration's cost and below
	// the first two's ends the run after the second.
	first, second := unpriced[0].atTestPrices(), unpriced[1].atTestPrices()
	require.Positive(t, second)
	limit := first + second/2
	pricing := fmt.Sprintf("pricing:\n  fake-model: {input: %g, output: %g}\n", costInputPrice, costOutputPrice)
	w, r = run(t, costConfig(bin, fmt.Sprintf("  max_iterations: 6\n  max_cost_usd: %g\n", limit), pricing))
	assert.NotContains(t, r.stderr, "cannot be enforced")
	require.Equal(t, 2, r.code, "max_cost; stderr:\n%s", r.stderr)
	assert.Equal(t, []string{
		"ralph task.start",
		"agent build.done", "finished builder success",
		"finished reviewer success",
		"terminate max_cost",
	}, w.flow())
	priced := w.pricedIterations()
	require.Len(t, priced, 2)
	total := 0.0
	for _, p := range priced {
		assert.Equal(t, "computed", p.CostSource)
		assert.Equal(t, "fake-model", p.Model)
		assert.InDelta(t, p.atTestPrices(), p.CostUSD, 1e-9, "%s: tokens %+v at the configured price", p.Hat, p.Tokens)
		total += p.CostUSD
	}
	assert.Less(t, priced[0].CostUSD, limit, "the first iteration alone stays under the limit")
	assert.GreaterOrEqual(t, total, limit, "the second crosses it")
	assert.Contains(t, r.stderr, "(computed)", "the summary shows the cost's source")
	assert.Contains(t, w.ralph("events").stdout, "(computed)", "ralph events shows the cost's source")
}
