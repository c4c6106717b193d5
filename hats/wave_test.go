package hats

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func waveRegistry(t *testing.T, aggregate *Aggregate) *Registry {
	t.Helper()
	r, err := NewRegistry([]Hat{
		{ID: "dispatcher", Triggers: []string{"task.start"}, Publishes: []string{"review.perspective"}},
		{ID: "reviewer", Triggers: []string{"review.perspective"}, Publishes: []string{"review.done"}, Concurrency: 3},
		{ID: "synthesizer", Triggers: []string{"review.done"}, Publishes: []string{"LOOP_COMPLETE"}, Aggregate: aggregate},
	}, WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	return r
}

func TestWaveTimeouts(t *testing.T) {
	r := waveRegistry(t, &Aggregate{Mode: AggregateWaitForAll, Timeout: 2 * time.Minute})
	reviewer, _ := r.Get("reviewer")
	assert.Equal(t, 2*time.Minute, r.WorkerTimeout(reviewer), "the aggregator's timeout, without the hat's own")
	assert.Equal(t, 2*time.Minute, r.WaveDeadline(reviewer))
	reviewer.Timeout = time.Minute
	assert.Equal(t, time.Minute, r.WorkerTimeout(reviewer), "the hat's own first")

	bare := waveRegistry(t, nil)
	reviewer, _ = bare.Get("reviewer")
	assert.Equal(t, DefaultWaveTimeout, bare.WorkerTimeout(reviewer))
	assert.Zero(t, bare.WaveDeadline(reviewer), "no aggregator: the wave waits for every worker")
}

func TestWavePrompts(t *testing.T) {
	r := waveRegistry(t, &Aggregate{Mode: AggregateWaitForAll})
	dispatcher, _ := r.Get("dispatcher")
	p := BuildPrompt(PromptInput{Hat: dispatcher, Routes: r.Routes(dispatcher), WaveRoutes: r.WaveRoutes(dispatcher), EmitCommand: "ralph"})
	assert.Contains(t, p, "# Waves\n")
	assert.Contains(t, p, "- `review.perspective` → reviewer (up to 3 workers at once)")
	assert.Contains(t, p, `ralph wave emit review.perspective --payloads "<item 1>"`)

	reviewer, _ := r.Get("reviewer")
	w := BuildPrompt(PromptInput{Hat: reviewer, Events: []events.Event{{Topic: "review.perspective", Payload: events.StringPayload("security")}},
		Worker: &Worker{WaveID: "w-1", Index: 1, Total: 3}, EmitCommand: "ralph"})
	assert.Contains(t, w, "# You are one worker of a wave")
	assert.Contains(t, w, "You are worker 2 of 3 of wave `w-1`")
	assert.Contains(t, w, "do not commit, stash, reset, check out or clean")
	assert.Contains(t, w, "Do not start waves")
	assert.NotContains(t, w, "# Waves\n")
}

func TestCheckWarnsOfAnAggregatorWithoutWave(t *testing.T) {
	r, err := NewRegistry([]Hat{
		{ID: "a", Triggers: []string{"task.start"}, Publishes: []string{"x.done"}},
		{ID: "b", Triggers: []string{"x.done"}, Publishes: []string{"LOOP_COMPLETE"}, Aggregate: &Aggregate{Mode: AggregateWaitForAll}},
	}, WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	var rules []string
	for _, f := range Check(r, Topology{StartingEvent: "task.start", CompletionTopic: "LOOP_COMPLETE"}) {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, RuleAggregateNoWave)
	assert.NotContains(t, func() []string {
		var out []string
		for _, f := range Check(waveRegistry(t, &Aggregate{Mode: AggregateWaitForAll}), Topology{StartingEvent: "task.start", CompletionTopic: "LOOP_COMPLETE"}) {
			out = append(out, f.Rule)
		}
		return out
	}(), RuleAggregateNoWave)
}

func TestDescribeShowsWaveSettings(t *testing.T) {
	r := waveRegistry(t, &Aggregate{Mode: AggregateWaitForAll})
	var b strings.Builder
	for _, id := range []string{"reviewer", "synthesizer"} {
		h, _ := r.Get(id)
		writeSettings(&b, h, HatDetails{Backend: "claude"})
	}
	assert.Contains(t, b.String(), "concurrency:       3 (a wave of its events runs one agent per event, 3 at once)")
	assert.Contains(t, b.String(), "aggregate:         wait_for_all, timeout 5m0s (collects a wave's results)")
}
