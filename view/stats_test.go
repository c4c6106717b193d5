package view

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/runfiles"
)

// statsLog writes an event log into ws's .ralph/ from lines of
// "topic payload" at one-second steps from start.
func statsLog(t testing.TB, ws, name string, start time.Time, lines ...string) {
	t.Helper()
	var b bytes.Buffer
	for i, l := range lines {
		topic, payload, _ := bytes.Cut([]byte(l), []byte(" "))
		source := "ralph"
		if bytes.HasPrefix(topic, []byte("agent:")) {
			topic, source = topic[len("agent:"):], "agent"
		}
		fmt.Fprintf(&b, `{"ts":%q,"topic":%q,"payload":%s,"source":%q}`+"\n",
			start.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), topic, payload, source)
	}
	dir := filepath.Join(ws, runfiles.DirName)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600))
}

// TestReadStats adds up three runs per config and per hat: endings and the
// success rate of the runs that are over, iterations, time (the runtime of
// an ended run, the iterations' of a cut-off one), tokens, and the cost
// known apart from the iterations whose cost is unknown. A line an agent
// wrote under one of ralph's topics counts for nothing.
func TestReadStats(t *testing.T) {
	ws := t.TempDir()
	day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	cfg := filepath.Join(ws, "ralph.yml")
	statsLog(t, ws, "events-20261120-100000.jsonl", day,
		`loop.started {"run_id":"a","config":"`+cfg+`","hats":["builder","reviewer"]}`,
		`iteration.finished {"iteration":1,"hat":"builder","duration_ms":1000,"tokens":{"input_tokens":100,"output_tokens":20},"cost_usd":0.01,"cost_source":"reported"}`,
		`agent:iteration.finished {"iteration":9,"hat":"builder","duration_ms":99999,"cost_usd":99}`,
		`iteration.finished {"iteration":2,"hat":"reviewer","duration_ms":2000,"tokens":{"input_tokens":50,"output_tokens":10},"cost_usd":0.02,"cost_source":"computed"}`,
		`loop.terminate {"reason":"completed","exit_code":0,"iterations":2,"runtime_ms":5000}`)
	statsLog(t, ws, "events-20261121-100000.jsonl", day.AddDate(0, 0, 1),
		`loop.started {"run_id":"b","config":"`+cfg+`","launch":{"mode":"loop","hats":"tdd"}}`,
		`iteration.finished {"iteration":1,"hat":"builder","duration_ms":3000,"tokens":{"input_tokens":10,"output_tokens":1},"cost_source":"unknown"}`,
		`loop.terminate {"reason":"max_iterations","exit_code":2,"iterations":1,"runtime_ms":4000}`)
	statsLog(t, ws, "events-20261122-100000.jsonl", day.AddDate(0, 0, 2),
		`loop.started {"run_id":"c","config":"`+cfg+`"}`,
		`iteration.finished {"iteration":1,"hat":"builder","duration_ms":700,"tokens":{"input_tokens":1,"output_tokens":1},"cost_usd":0.5}`)

	st, err := ReadStats(ws, time.Time{})
	require.NoError(t, err)
	total := st.Total
	assert.Equal(t, 3, total.Runs)
	assert.Equal(t, map[string]int{"completed": 1, "max_iterations": 1, "unfinished": 1}, total.Endings)
	require.NotNil(t, total.SuccessRate)
	assert.InDelta(t, 1.0/3, *total.SuccessRate, 1e-9)
	assert.Equal(t, 4, total.Iterations)
	assert.Equal(t, int64(5000+4000+700), total.DurationMS)
	assert.Equal(t, int64(161), total.Tokens.InputTokens)
	assert.InDelta(t, 0.53, total.CostUSD, 1e-9)
	assert.True(t, total.CostComputed)
	assert.Equal(t, 1, total.CostUnknownIterations)

	require.Len(t, st.Configs, 2)
	assert.Equal(t, "ralph.yml", st.Configs[0].Name)
	assert.Equal(t, 2, st.Configs[0].Runs)
	assert.Equal(t, "ralph.yml -H tdd", st.Configs[1].Name)
	assert.Equal(t, map[string]int{"max_iterations": 1}, st.Configs[1].Endings)
	assert.Equal(t, 1, st.Configs[1].CostUnknownIterations)

	require.Len(t, st.Hats, 2)
	builder, reviewer := st.Hats[0], st.Hats[1]
	assert.Equal(t, "builder", builder.Name)
	assert.Equal(t, 3, builder.Runs)
	assert.Equal(t, 3, builder.Iterations)
	assert.Equal(t, int64(1000+3000+700), builder.DurationMS, "a hat's time is its iterations'")
	assert.InDelta(t, 0.51, builder.CostUSD, 1e-9)
	assert.False(t, builder.CostComputed)
	assert.Equal(t, "reviewer", reviewer.Name)
	assert.Equal(t, map[string]int{"completed": 1}, reviewer.Endings)
	assert.True(t, reviewer.CostComputed)

	recent, err := ReadStats(ws, day.AddDate(0, 0, 1))
	require.NoError(t, err)
	assert.Equal(t, 2, recent.Total.Runs, "the run that started before since is left out")

	var out bytes.Buffer
	require.NoError(t, WriteStats(&out, st, time.UTC))
	assert.Contains(t, out.String(), "3 runs: completed 1, max_iterations 1, unfinished 1; 4 iterations, 10s, 193 tokens, $0.5300 + unknown (1 iteration)\n")
	assert.Regexp(t, `(?m)^ralph\.yml -H tdd +1 +0% +1 +4s +11 +unknown \(1 iteration\) `, out.String())
}

// BenchmarkStats200Runs: `ralph stats` over a workspace of 200 runs of 50
// iterations each (two hats); the figure that matters is per run.
func BenchmarkStats200Runs(b *testing.B) {
	ws := b.TempDir()
	const runs, lines = 200, 400
	for r := range runs {
		var body bytes.Buffer
		start := benchgen.Start.AddDate(0, 0, r)
		fmt.Fprintf(&body, `{"ts":%q,"topic":"loop.started","payload":{"run_id":"run-%03d","config":"ralph.yml","hats":["builder","reviewer"]},"source":"ralph"}`+"\n", start.Format(time.RFC3339), r)
		_, err := benchgen.Write(&body, lines)
		require.NoError(b, err)
		fmt.Fprintf(&body, `{"ts":%q,"topic":"loop.terminate","payload":{"reason":"completed","exit_code":0,"iterations":100,"runtime_ms":60000},"source":"ralph"}`+"\n", start.Add(time.Hour).Format(time.RFC3339))
		dir := filepath.Join(ws, runfiles.DirName)
		require.NoError(b, os.MkdirAll(dir, 0o700))
		require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("events-%s.jsonl", start.Format("20060102-150405"))), body.Bytes(), 0o600))
	}
	b.ResetTimer()
	for b.Loop() {
		st, err := ReadStats(ws, time.Time{})
		if err != nil || st.Total.Runs != runs {
			b.Fatalf("stats: %v, %d runs", err, st.Total.Runs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/runs/1000, "µs/run")
}
