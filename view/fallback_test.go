package view

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

func TestSwitchText(t *testing.T) {
	sw := func(reason runfiles.SwitchReason, reset string) runfiles.BackendSwitchedRecord {
		return runfiles.BackendSwitchedRecord{Iteration: 2, Hat: "builder", From: "claude", To: "codex", Reason: reason, ResetAt: reset}
	}
	assert.Equal(t, "claude → codex: claude is rate-limited until Nov 22 11:00 UTC", SwitchText(sw(runfiles.SwitchRateLimit, "2026-11-22T11:00:00Z")))
	assert.Equal(t, "claude → codex: claude's credentials were refused; it is tried again when the run is resumed", SwitchText(sw(runfiles.SwitchAuth, "")))
	assert.Equal(t, "claude → codex: claude could not run; it is tried again when the run is resumed", SwitchText(sw(runfiles.SwitchUnavailable, "")))
	assert.Equal(t, "claude → codex: claude's service is overloaded; it is tried again until Nov 22 10:10 UTC", SwitchText(sw(runfiles.SwitchOverloaded, "2026-11-22T10:10:00Z")))
	back := runfiles.BackendSwitchedRecord{From: "codex", To: "claude", Reason: runfiles.SwitchRecovered}
	assert.Equal(t, "codex → claude: claude is available again", SwitchText(back))

	// ralph events, status, watch and the web page word the log's line the same.
	ev := runfiles.RalphEvent(runfiles.TopicBackendSwitched, sw(runfiles.SwitchRateLimit, "2026-11-22T11:00:00Z"))
	assert.Equal(t, SwitchText(sw(runfiles.SwitchRateLimit, "2026-11-22T11:00:00Z")), EventText(ev, false))
}

func TestModelKeepsFiguresPerBackend(t *testing.T) {
	m := NewModel(time.Now)
	finish := func(backend string, tokens int64, usd float64, failure events.FailureKind) {
		it := engine.IterationInfo{N: 1, Backend: backend}
		m.IterationStarted(it)
		m.IterationFinished(it, events.AgentResult{Usage: events.Usage{InputTokens: tokens}, CostUSD: usd, Failure: failure})
	}
	finish("claude", 100, 0, events.FailureRateLimit)
	m.BackendSwitched(engine.IterationInfo{}, runfiles.BackendSwitchedRecord{From: "claude", To: "codex", Reason: runfiles.SwitchRateLimit})
	finish("codex", 1000, 0.5, "")
	finish("codex", 2000, 0.25, "")
	r := m.Run()
	assert.Equal(t, "codex", r.Backend)
	assert.Equal(t, "claude → codex: claude is rate-limited", r.LastEvent)
	require.Len(t, r.ByBackend, 2)
	assert.Equal(t, runfiles.BackendTotal{Iterations: 2, Usage: events.Usage{InputTokens: 3000}, CostUSD: 0.75}, r.ByBackend["codex"])
	assert.Equal(t, 0, r.ByBackend["claude"].Iterations, "a limited attempt is not an iteration")
	assert.Equal(t, "claude: 0 iterations, 100 tokens, $0.0000; codex: 2 iterations, 3000 tokens, $0.7500", BackendList(r.ByBackend))
	assert.Empty(t, BackendList(map[string]runfiles.BackendTotal{"codex": {}}), "one backend: the run's totals say it all")
}

func TestWriteStatusShowsTheChain(t *testing.T) {
	var b bytes.Buffer
	WriteStatus(&b, runfiles.Status{RunID: "r1", Backend: "codex",
		Unavailable: map[string]runfiles.Unavailable{"claude": {Reason: runfiles.SwitchRateLimit, Until: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)}},
		ByBackend:   map[string]runfiles.BackendTotal{"claude": {Iterations: 1}, "codex": {Iterations: 2}}})
	out := b.String()
	assert.Contains(t, out, "backend: codex\n")
	assert.Contains(t, out, "backend out: claude (rate_limit until Nov 22 11:00 UTC)\n")
	assert.Contains(t, out, "by backend: claude: 1 iteration, 0 tokens, $0.0000; codex: 2 iterations, 0 tokens, $0.0000\n")
}
