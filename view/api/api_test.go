package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// workspace makes a workspace whose current run's log holds evs, and
// returns the workspace and the log.
func workspace(t *testing.T, evs ...events.Event) (string, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, runfiles.DirName, "events-20261125-100000.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	require.NoError(t, os.WriteFile(log, nil, 0o644))
	for _, ev := range evs {
		require.NoError(t, events.AppendTo(log, ev))
	}
	return dir, log
}

var start = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func agentEvent(minute int, hat, topic string) events.Event {
	return events.Event{TS: start.Add(time.Duration(minute) * time.Minute), Topic: topic, Hat: hat, Iteration: minute,
		Source: events.SourceAgent, Payload: events.StringPayload(topic + " by " + hat)}
}

func topics(lines []api.Line) []string {
	var out []string
	for _, l := range lines {
		ev, err := events.ParseLine(l.Event)
		if err != nil {
			out = append(out, "malformed")
			continue
		}
		out = append(out, ev.Topic)
	}
	return out
}

func TestEventsFilterAsRalphEventsDoes(t *testing.T) {
	dir, log := workspace(t,
		agentEvent(1, "builder", "build.done"),
		agentEvent(2, "reviewer", "review.rejected"),
		agentEvent(3, "builder", "build.done"),
		agentEvent(4, "builder", "build.blocked"),
		agentEvent(5, "reviewer", "review.approved"))
	ctx, now := context.Background(), start.Add(10*time.Minute)

	all, malformed, err := api.Events(ctx, dir, api.EventQuery{}, now, nil)
	require.NoError(t, err)
	assert.Zero(t, malformed)
	assert.Equal(t, []string{"build.done", "review.rejected", "build.done", "build.blocked", "review.approved"}, topics(all))

	builds, _, err := api.Events(ctx, dir, api.EventQuery{Topic: "build.*", Last: 2}, now, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"build.done", "build.blocked"}, topics(builds))

	reviewer, _, err := api.Events(ctx, dir, api.EventQuery{Hat: "reviewer", Since: "7m"}, now, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"review.approved"}, topics(reviewer))

	// Each line is the log's own bytes, and Next is where the next starts.
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	for i, l := range all {
		assert.Equal(t, string(data[l.Offset:l.Next-1]), string(l.Event))
		if i > 0 {
			assert.Equal(t, all[i-1].Next, l.Offset)
		}
	}
	assert.Equal(t, int64(len(data)), all[len(all)-1].Next)
}

func TestEventsLeaveOutMalformedLinesAndCountThem(t *testing.T) {
	dir, log := workspace(t, agentEvent(1, "builder", "build.done"))
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("not json\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, events.AppendTo(log, agentEvent(2, "builder", "build.done")))

	lines, malformed, err := api.Events(context.Background(), dir, api.EventQuery{}, start, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, malformed)
	assert.Equal(t, []string{"build.done", "build.done"}, topics(lines))
}

func TestEventQueryRefusesBadFiltersWithAFix(t *testing.T) {
	dir, _ := workspace(t)
	for _, q := range []api.EventQuery{{Topic: "build..done"}, {Since: "yesterday-ish"}, {Last: -1}} {
		_, _, err := api.Events(context.Background(), dir, q, start, nil)
		require.Error(t, err, "%+v", q)
		assert.NotEmpty(t, view.HintOf(err), "%+v", q)
	}
}

func TestEventsWithoutARunSayHowToStartOne(t *testing.T) {
	_, _, err := api.Events(context.Background(), t.TempDir(), api.EventQuery{}, start, nil)
	require.ErrorIs(t, err, runfiles.ErrNoLog)
	assert.Contains(t, view.HintOf(err), "ralph loop")
}

func TestIterationsAreTheFinishedLinesOfRalph(t *testing.T) {
	finished := func(n int, hat string, cost float64) events.Event {
		return events.Event{TS: start.Add(time.Duration(n) * time.Minute), Topic: runfiles.TopicIterationFinished,
			Source: events.SourceRalph, Iteration: n, Hat: hat,
			Payload: events.ObjectPayload(map[string]any{"iteration": n, "hat": hat, "outcome": "ok", "duration_ms": 1500 * n,
				"tokens": map[string]int{"input_tokens": 100 * n, "output_tokens": 10 * n}, "cost_usd": cost})}
	}
	forged := finished(9, "builder", 99)
	forged.Source = events.SourceAgent
	dir, _ := workspace(t, finished(1, "planner", 0.25), agentEvent(2, "builder", "build.done"), forged, finished(2, "builder", 0.5))

	its, err := api.Iterations(context.Background(), dir, api.EventQuery{}, nil)
	require.NoError(t, err)
	require.Len(t, its, 2, "an agent's line with ralph's topic is not an iteration")
	assert.Equal(t, api.Iteration{Iteration: 2, Hat: "builder", Outcome: "ok", DurationMS: 3000,
		Tokens: events.Usage{InputTokens: 200, OutputTokens: 20}, CostUSD: 0.5, CostText: "$0.5000", RunCostText: "$0.7500",
		FinishedAt: start.Add(2 * time.Minute)}, its[1])
}

// Each iteration says its cost and the run's so far in ralph's words: once
// an iteration's cost is unknown, so is the run's total, never a sum that
// counts it as zero.
func TestIterationsSayTheirCostAndTheRunsSoFar(t *testing.T) {
	finished := func(n int, cost float64, source runfiles.CostSource) events.Event {
		return events.Event{TS: start.Add(time.Duration(n) * time.Minute), Topic: runfiles.TopicIterationFinished,
			Source: events.SourceRalph, Iteration: n, Hat: "builder",
			Payload: events.ObjectPayload(map[string]any{"iteration": n, "hat": "builder", "outcome": "success", "cost_usd": cost, "cost_source": source})}
	}
	dir, _ := workspace(t, finished(1, 0.25, runfiles.CostReported), finished(2, 0, runfiles.CostUnknown), finished(3, 0.5, runfiles.CostComputed))

	its, err := api.Iterations(context.Background(), dir, api.EventQuery{}, nil)
	require.NoError(t, err)
	var got [][2]string
	for _, it := range its {
		got = append(got, [2]string{it.CostText, it.RunCostText})
	}
	assert.Equal(t, [][2]string{{"$0.2500", "$0.2500"}, {"unknown", "$0.2500 + unknown"}, {"$0.5000 (computed)", "$0.7500 + unknown"}}, got)
}

func TestEmitAppendsAnAgentsLineRedacted(t *testing.T) {
	dir, log := workspace(t)
	t.Setenv("RALPH_TEST_TOKEN", "s3cr3t-value")
	payload, err := api.Payload("deployed with s3cr3t-value", false)
	require.NoError(t, err)
	e := api.Emit{Dir: dir, Topic: "build.done", Payload: payload, Hat: "builder", Iteration: 3}
	warning, err := e.Append()
	require.NoError(t, err)
	assert.Empty(t, warning)

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	ev, err := events.ParseLine(data)
	require.NoError(t, err)
	assert.Equal(t, "build.done", ev.Topic)
	assert.Equal(t, "builder", ev.Hat)
	assert.Equal(t, 3, ev.Iteration)
	assert.Equal(t, events.SourceAgent, ev.Source)
	assert.NotContains(t, string(data), "s3cr3t-value")
	assert.Contains(t, string(data), "[redacted:RALPH_TEST_TOKEN]")
}

// A topic or target made of a secret is refused, quoted hidden, and
// nothing is written: hidden, neither would name a topic or a hat.
func TestEmitRefusesATopicOrTargetThatHoldsASecret(t *testing.T) {
	dir, log := workspace(t)
	const key = "sk-emit-7f3a9c1e5b"
	r := redact.New([]string{"MY_API_KEY=" + key}, nil)
	for _, e := range []api.Emit{
		{Dir: dir, Topic: "build." + key, Redactor: r},
		{Dir: dir, Topic: "build.done", Target: key, Redactor: r},
		{Dir: dir, Topic: "build." + base64.StdEncoding.EncodeToString([]byte(key)), Redactor: r},
	} {
		_, err := e.Append()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "[redacted:MY_API_KEY]")
		assert.Contains(t, err.Error(), "holds a secret value")
		assert.NotContains(t, err.Error()+view.HintOf(err), key)
	}
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Empty(t, data, "nothing was appended")
}

func TestEmitRefusesWhatNoLoopWouldRead(t *testing.T) {
	_, err := api.Emit{Dir: t.TempDir(), Topic: "build.done"}.Append()
	require.Error(t, err)
	assert.Contains(t, view.HintOf(err), "pass --file")

	dir, _ := workspace(t)
	_, err = api.Emit{Dir: dir, Topic: "build done"}.Append()
	require.Error(t, err)
	assert.Contains(t, view.HintOf(err), "dot-separated")

	_, err = api.Payload("{not json", true)
	require.Error(t, err)
}

func TestAskWritesAQuestionForAPerson(t *testing.T) {
	dir, log := workspace(t)
	id, _, err := api.Emit{Dir: dir, Hat: "builder", Iteration: 1}.Ask("Keep the old API?", []string{"yes", "no"}, 30*time.Minute)
	require.NoError(t, err)
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	ev, err := events.ParseLine(data)
	require.NoError(t, err)
	assert.Equal(t, runfiles.TopicHumanAsked, ev.Topic)
	var q struct {
		ID      string   `json:"id"`
		Options []string `json:"options"`
	}
	require.NoError(t, json.Unmarshal(ev.Payload, &q))
	assert.Equal(t, id, q.ID)
	assert.Equal(t, []string{"yes", "no"}, q.Options)
	assert.True(t, strings.HasPrefix(id, "q-"))
}

func TestRequestsWithNothingRunningSayHowToStartOne(t *testing.T) {
	dir := t.TempDir()
	for name, request := range map[string]func() (string, error){
		"stop":   func() (string, error) { return api.Stop(dir, false) },
		"pause":  func() (string, error) { return api.Pause(dir) },
		"resume": func() (string, error) { return api.Resume(dir) },
	} {
		msg, err := request()
		require.Error(t, err, name)
		assert.Empty(t, msg, name)
		assert.NotEmpty(t, view.HintOf(err), name)
	}
}

func TestStatusOfAnEmptyWorkspaceIsNone(t *testing.T) {
	s, err := api.ReadStatus(context.Background(), t.TempDir(), 5, start, nil)
	require.NoError(t, err)
	assert.Equal(t, api.KindNone, s.Kind)
	d := api.NewReader(t.TempDir(), nil).Dashboard("")
	assert.Equal(t, api.KindNone, d.Kind)
	assert.NotNil(t, d.Slots)
}
