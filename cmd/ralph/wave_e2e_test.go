package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
)

const waveConfig = `event_loop:
  prompt: Review the code from three angles.
  completion_promise: review.complete
  starting_event: review.start
  max_iterations: 10
  completion_confirmations: 1
hats:
  coordinator:
    triggers: [review.start]
    publishes: [review.perspective]
    instructions: Dispatch the reviewers as a wave.
  reviewer:
    triggers: [review.perspective]
    publishes: [review.done]
    concurrency: 3
    timeout: 60
    instructions: Review from the angle your event names.
  synthesizer:
    triggers: [review.done]
    publishes: [review.complete]
    aggregate: {mode: wait_for_all, timeout: 120}
    instructions: Merge the findings into one report.
`

// waveWorkerSh is what each reviewer does: it says when it started, waits
// until all three have (a barrier, so they must run at once), tries to start
// a wave of its own (which must be refused), publishes its finding and says
// when it ended.
const waveWorkerSh = `set -e
s="$SCRIPTAGENT_STATE"
i="$RALPH_WAVE_INDEX"
date +%s%N > "$s/start-$i"
while [ "$(ls "$s" | grep -c '^start-')" -lt 3 ]; do sleep 0.02; done
if "$RALPH_BIN" wave emit review.nested --payloads x 2> "$s/nested-$i.err"; then echo 0 > "$s/nested-$i"; else echo $? > "$s/nested-$i"; fi
"$RALPH_BIN" emit review.done "finding of worker $i"
date +%s%N > "$s/end-$i"
`

func waveScript() agentScript {
	return agentScript{ByHat: map[string][]step{
		"coordinator": {{Sh: `"$RALPH_BIN" wave emit review.perspective --payloads "security" "error handling" "docs"`}},
		"reviewer":    {{Sh: waveWorkerSh}},
		"synthesizer": {{Say: "Report written. " + tag("review.complete", "three findings merged")}},
	}}
}

func TestE2EWaveRunsWorkersAtOnceAndAggregatesOnce(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", waveConfig+agentCLI())
	w.script(waveScript())
	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)

	// The three workers overlapped: each started before any ended.
	var lastStart, firstEnd int64
	for i := range 3 {
		start, end := w.stateNumber(fmt.Sprintf("start-%d", i)), w.stateNumber(fmt.Sprintf("end-%d", i))
		lastStart = max(lastStart, start)
		if firstEnd == 0 || end < firstEnd {
			firstEnd = end
		}
		// A worker cannot start a wave.
		assert.NotEqual(t, int64(0), w.stateNumber(fmt.Sprintf("nested-%d", i)), "wave emit inside a worker must fail")
		assert.Contains(t, w.stateText(fmt.Sprintf("nested-%d.err", i)), "cannot run inside a wave worker")
	}
	assert.Less(t, lastStart, firstEnd, "every worker started before the first one ended")

	assert.Equal(t, "1", w.stateText("hat-synthesizer.count"), "the aggregator runs once")
	assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, w.waveResults(), "each result once, in worker order")
	synth := w.prompt(5) // coordinator, three workers, synthesizer
	for i := range 3 {
		assert.Contains(t, synth, fmt.Sprintf("finding of worker %d", i))
	}
	worker := w.prompt(2)
	assert.Contains(t, worker, "You are one worker of a wave")
	assert.Equal(t, 1, strings.Count(worker, "## 1."), "a worker's prompt holds its one event")
	assert.Contains(t, w.prompt(1), "wave emit review.perspective", "the dispatching hat is told how to start a wave")
}

func TestE2EWaveKilledMidWaveResumes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", waveConfig+agentCLI())
	w.script(waveScript())
	// Killed once the first worker's end is recorded: the others are cut
	// off (or finish orphaned), and run again on resume.
	r := w.ralphKilledAt(engine.FaultWaveWorkerFinished+":1", false)
	require.True(t, r.killed, "ralph was to be killed mid-wave: exit %d\n%s", r.code, r.stderr)
	before := w.countTopic(runfiles.TopicWaveWorkerFinished)
	require.Equal(t, 1, before)

	r2 := w.ralph("loop", "--resume")
	require.Equal(t, 0, r2.code, r2.stderr)
	assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, w.waveResults(), "each worker's event is in the log exactly once")
	assert.Equal(t, 3, w.countTopic(runfiles.TopicWaveWorkerFinished), "the worker recorded before the kill is not run again")
	assert.Equal(t, 1, w.countTopic(runfiles.TopicWaveFinished))
	assert.Equal(t, "1", w.stateText("hat-synthesizer.count"), "the aggregator runs once")
}

// waveResults are the review.done events in the log, as "worker N" from
// their wave index, in log order.
func (w *workspace) waveResults() []string {
	w.t.Helper()
	var out []string
	for _, r := range w.events() {
		if r.Err != nil || r.Event.Topic != "review.done" {
			continue
		}
		require.NotNil(w.t, r.Event.Wave, "a worker's result carries its wave")
		require.Equal(w.t, fmt.Sprintf("finding of worker %d", r.Event.WaveIndex), r.Event.PayloadText())
		out = append(out, fmt.Sprintf("worker %d", r.Event.WaveIndex))
	}
	return out
}

// resultsByWave is waveResults for each wave of the log.
func (w *workspace) resultsByWave() map[string][]string {
	w.t.Helper()
	out := map[string][]string{}
	for _, r := range w.events() {
		if r.Err == nil && r.Event.Topic == "review.done" {
			require.NotNil(w.t, r.Event.Wave)
			out[r.Event.WaveID] = append(out[r.Event.WaveID], fmt.Sprintf("worker %d", r.Event.WaveIndex))
		}
	}
	require.NotEmpty(w.t, out)
	return out
}

func (w *workspace) countTopic(topic string) int {
	n := 0
	for _, r := range w.events() {
		if r.Err == nil && r.Event.Topic == topic {
			n++
		}
	}
	return n
}

func (w *workspace) stateText(name string) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.state, name))
	require.NoError(w.t, err)
	return strings.TrimSpace(string(data))
}

func (w *workspace) stateNumber(name string) int64 {
	w.t.Helper()
	n, err := strconv.ParseInt(w.stateText(name), 10, 64)
	require.NoError(w.t, err, name)
	return n
}

// A kill anywhere in and around a wave (as each worker ends, before,
// during and after each write of the log) and a resume leave each
// worker's result in the log exactly once.
func TestE2EWaveCrashAnywhereAndResume(t *testing.T) {
	t.Parallel()
	var plan []string
	for n := 1; n <= 3; n++ {
		plan = append(plan, fmt.Sprintf("%s:%d", engine.FaultWaveWorkerFinished, n))
	}
	for n := 3; n <= 10; n++ {
		plan = append(plan, fmt.Sprintf("%s:%d", engine.FaultAppendTorn, n), fmt.Sprintf("%s:%d", engine.FaultAppendAfter, n))
	}
	fired := 0
	for _, spec := range plan {
		t.Run(spec, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", waveConfig+agentCLI())
			w.script(waveScript())
			r := w.ralphKilledAt(spec, false)
			if !r.killed {
				require.Equal(t, 0, r.code, r.stderr)
			} else {
				fired++
				w.assertStateReadable()
				r2 := w.ralph("loop", "--resume")
				require.Equal(t, 0, r2.code, r2.stderr)
			}
			// A kill before the dispatcher's iteration is recorded runs it
			// again, and it may start a second wave: each wave's results
			// are in the log once each.
			waves := w.resultsByWave()
			for id, results := range waves {
				assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, results, id)
			}
			assert.Equal(t, len(waves), w.countTopic(runfiles.TopicWaveFinished))
		})
	}
	assert.GreaterOrEqual(t, fired, 10, "most kills must land")
}

// While a wave runs, ralph status, ralph events, ralph serve's dashboard
// and the --headless stream say so: which hat, how many workers, how many
// are done.
func TestE2EWaveShowsInTheViews(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", waveConfig+agentCLI())
	sc := waveScript()
	// The workers wait for the test to release them, so the wave is
	// seen while it runs.
	sc.ByHat["reviewer"] = []step{{Sh: `while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.02; done
"$RALPH_BIN" emit review.done "finding of worker $RALPH_WAVE_INDEX"`}}
	w.script(sc)
	cmd := exec.Command(ralphBin, "loop", "--headless")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	stdout, stderr := &lockedWriter{}, &lockedWriter{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var st struct {
		Wave *struct {
			Hat     string `json:"hat"`
			Workers int    `json:"workers"`
			Done    int    `json:"done"`
		} `json:"wave"`
	}
	waitFor(t, "the wave in ralph status", func() bool {
		r := w.ralph("status", "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil && st.Wave != nil
	})
	assert.Equal(t, "reviewer", st.Wave.Hat)
	assert.Equal(t, 3, st.Wave.Workers)
	assert.Equal(t, 0, st.Wave.Done)
	text := w.ralph("status")
	assert.Contains(t, text.stdout, "wave: wave of hat reviewer: 0 of 3 workers done")

	s := startServe(t, w.dir)
	var dash struct {
		Loop struct {
			WaveText string `json:"wave_text"`
		}
	}
	s.getJSON("/api/dashboard", &dash)
	assert.Equal(t, "wave of hat reviewer: 0 of 3 workers done", dash.Loop.WaveText)

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.NoError(t, cmd.Wait(), stderr.String())

	var done []int
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var ev struct {
			Event string `json:"event"`
			Done  int    `json:"done"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		if ev.Event == "wave" {
			done = append(done, ev.Done)
		}
	}
	assert.Equal(t, []int{0, 1, 2, 3}, done, "the headless stream reports the wave's start and each worker's end")
	events := w.ralph("events")
	assert.Contains(t, events.stdout, "reviewer: 3 workers, 3 at once")
	assert.Contains(t, events.stdout, "reviewer: 3 of 3 workers have a result, 3 events merged")
	last := w.ralph("status")
	assert.Contains(t, last.stdout, "last wave: iteration 2, wave of hat reviewer: 3 of 3 workers done")
}

// A wave that crosses max_cost_usd stops its other workers and ends the
// run on the limit; a resume ends again at once until the limit is
// raised, then goes on to the collector without running the wave again.
func TestE2EWaveStopsAtMaxCost(t *testing.T) {
	w := newWorkspace(t)
	config := func(limit string) string {
		return "event_loop:\n  max_cost_usd: " + limit + "\n" + waveConfig[len("event_loop:\n"):] +
			"cli:\n  backend: claude\n  command: " + agentBin + "\n"
	}
	w.write("ralph.yml", config("0.015"))
	w.script(agentScript{ByHat: map[string][]step{
		// Each agent reports $0.01: the coordinator leaves the run under
		// the limit, the first worker to end takes it over.
		"coordinator": {{Sh: `"$RALPH_BIN" wave emit review.perspective --payloads security "error handling" docs >/dev/null`,
			PrintFile: w.claudeStream("coordinator.jsonl", "Dispatched.", 100)}},
		// The first worker ends once the others run; they run until stopped.
		"reviewer": {{Sh: `s="$SCRIPTAGENT_STATE"; echo $$ > "$s/worker-$RALPH_WAVE_INDEX.pid"
if [ "$RALPH_WAVE_INDEX" != 0 ]; then while :; do sleep 0.02; done; fi
while [ ! -s "$s/worker-1.pid" ] || [ ! -s "$s/worker-2.pid" ]; do sleep 0.02; done`,
			PrintFile: w.claudeStream("reviewer.jsonl", "Reviewed. "+tag("review.done", "finding of worker 0"), 100)}},
		"synthesizer": {{PrintFile: w.claudeStream("synthesizer.jsonl", "Merged. "+tag("review.complete", "report"), 100)}},
	}})
	r := w.ralph("loop")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "max_cost_usd")
	var fin runfiles.WaveFinishedRecord
	for _, rec := range w.events() {
		if rec.Event.Topic == runfiles.TopicWaveFinished {
			runfiles.Decode(rec.Event, &fin)
		}
	}
	assert.Equal(t, []int{0}, fin.Succeeded)
	assert.Equal(t, []int{1, 2}, fin.Stopped)
	assert.Equal(t, runfiles.ReasonMaxCost, fin.Limit)
	for i := 1; i <= 2; i++ {
		assert.True(t, processGone(w.pidFile(filepath.Join(w.state, fmt.Sprintf("worker-%d.pid", i)))), "worker %d is stopped", i)
	}
	assert.Equal(t, []string{"worker 0"}, w.waveResults(), "what arrived is merged")
	assert.NoFileExists(t, filepath.Join(w.state, "hat-synthesizer.count"), "the collector does not run past the limit")

	started := w.countTopic(runfiles.TopicIterationStarted)
	again := w.ralph("loop", "--resume")
	require.Equal(t, 2, again.code, again.stderr)
	assert.Equal(t, started, w.countTopic(runfiles.TopicIterationStarted), "a resume under the same limit runs nothing")

	w.write("ralph.yml", config("1"))
	past := w.ralph("loop", "--resume")
	require.Equal(t, 0, past.code, past.stderr)
	assert.Equal(t, 3, w.countTopic(runfiles.TopicWaveWorkerFinished), "the wave is not run again")
	assert.Equal(t, "1", w.stateText("hat-synthesizer.count"))
	synth, err := filepath.Glob(filepath.Join(w.dir, ".ralph", "runs", "*", runfiles.Prompt(3, 1)))
	require.NoError(t, err)
	require.Len(t, synth, 1, "the collector's prompt is kept")
	prompt, err := os.ReadFile(synth[0])
	require.NoError(t, err)
	assert.Contains(t, string(prompt), "Workers 2, 3 were stopped when the run reached its max_cost_usd limit")
}

// geminiStream writes a Gemini CLI stream whose reply is text, and returns
// its path.
func (w *workspace) geminiStream(name, text string) string {
	w.t.Helper()
	reply, err := json.Marshal(text)
	require.NoError(w.t, err)
	stream := `{"type":"init","timestamp":"2026-11-22T01:55:20.511Z","session_id":"00000000-0000-4000-8000-00000000001b","model":"auto"}` + "\n" +
		`{"type":"message","timestamp":"2026-11-22T01:55:20.900Z","role":"assistant","content":` + string(reply) + `,"delta":true}` + "\n" +
		`{"type":"result","timestamp":"2026-11-22T01:55:21.000Z","status":"success","stats":{"total_tokens":112,"input_tokens":100,"output_tokens":12,"cached":0,"input":100,"duration_ms":489,"tool_calls":0,"models":{}}}` + "\n"
	path := filepath.Join(w.state, name)
	require.NoError(w.t, os.WriteFile(path, []byte(stream), 0o644))
	return path
}

// A worker whose Claude Code hits a usage limit an hour away moves to the
// hat's fallback, Gemini CLI (both played by the scripted agent, in each
// CLI's own output format), and its result is merged like the others'.
func TestE2EWaveWorkerFallsBackOnAUsageLimit(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", waveConfig+"cli:\n  backend: claude\n  command: "+agentBin+
		"\n  fallback:\n    - {name: gemini, command: "+agentBin+"}\n")
	limited := w.cannedStream("claude-rejected.jsonl", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	claudeDone := w.claudeStream("claude-done.jsonl", "Reviewed.", 100)
	geminiDone := w.geminiStream("gemini-done.jsonl", "Reviewed.")
	w.script(agentScript{ByHat: map[string][]step{
		"coordinator": {{Sh: `"$RALPH_BIN" wave emit review.perspective --payloads security "error handling" docs >/dev/null`,
			PrintFile: w.claudeStream("coordinator.jsonl", "Dispatched.", 100)}},
		// Worker 1's first run is refused for the usage limit; its second
		// (on gemini, claude being out) and every other worker's publish
		// their finding.
		"reviewer": {{Sh: fmt.Sprintf(`s="$SCRIPTAGENT_STATE"; i="$RALPH_WAVE_INDEX"
if [ "$i" = 1 ] && mkdir "$s/limited" 2>/dev/null; then cat %q; exit 1; fi
"$RALPH_BIN" emit review.done "finding of worker $i"
if [ "$i" = 1 ]; then cat %q; else cat %q; fi`, limited, geminiDone, claudeDone)}},
		"synthesizer": {{PrintFile: w.geminiStream("synthesizer.jsonl", "Merged. "+tag("review.complete", "report"))}},
	}})
	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, w.waveResults())
	var switched []runfiles.BackendSwitchedRecord
	byWorker := map[int]runfiles.WaveWorkerRecord{}
	for _, rec := range w.events() {
		switch rec.Event.Topic {
		case runfiles.TopicBackendSwitched:
			var s runfiles.BackendSwitchedRecord
			runfiles.Decode(rec.Event, &s)
			switched = append(switched, s)
		case runfiles.TopicWaveWorkerFinished:
			var wr runfiles.WaveWorkerRecord
			runfiles.Decode(rec.Event, &wr)
			byWorker[wr.Index] = wr
		}
	}
	require.Len(t, switched, 1, "one switch: claude stays out for the rest of the run")
	assert.Equal(t, "claude", switched[0].From)
	assert.Equal(t, "gemini", switched[0].To)
	assert.Equal(t, runfiles.SwitchRateLimit, switched[0].Reason)
	assert.Equal(t, "gemini", byWorker[1].Backend)
	assert.Equal(t, runfiles.OutcomeSuccess, byWorker[1].Outcome)
	assert.Equal(t, "claude", byWorker[0].Backend)
	assert.Contains(t, r.stderr, "moves from claude to gemini")
}

// A ralph killed just after the worker that crossed max_cost_usd ended
// leaves a wave in flight; the resume checks the limit before it runs the
// workers left, and skips them as the live run would have stopped them.
func TestE2EWaveResumedPastMaxCostSkipsTheWorkersLeft(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  max_cost_usd: 0.015\n"+waveConfig[len("event_loop:\n"):]+
		"cli:\n  backend: claude\n  command: "+agentBin+"\n")
	w.script(agentScript{ByHat: map[string][]step{
		"coordinator": {{Sh: `"$RALPH_BIN" wave emit review.perspective --payloads security "error handling" docs >/dev/null`,
			PrintFile: w.claudeStream("coordinator.jsonl", "Dispatched.", 100)}},
		// Worker 0 ends once the others run; they never end.
		"reviewer": {{Sh: `s="$SCRIPTAGENT_STATE"; touch "$s/started-$RALPH_WAVE_INDEX"
if [ "$RALPH_WAVE_INDEX" != 0 ]; then while :; do sleep 0.02; done; fi
while [ ! -e "$s/started-1" ] || [ ! -e "$s/started-2" ]; do sleep 0.02; done`,
			PrintFile: w.claudeStream("reviewer.jsonl", "Reviewed. "+tag("review.done", "finding of worker 0"), 100)}},
		"synthesizer": {{PrintFile: w.claudeStream("synthesizer.jsonl", "Merged. "+tag("review.complete", "report"), 100)}},
	}})
	r := w.ralphKilledAt(engine.FaultWaveWorkerFinished+":1", false)
	require.True(t, r.killed, r.stderr)
	require.Equal(t, "3", w.stateText("hat-reviewer.count"))

	again := w.ralph("loop", "--resume")
	require.Equal(t, 2, again.code, again.stderr)
	assert.Equal(t, "3", w.stateText("hat-reviewer.count"), "the workers left are not run past the limit")
	var fin runfiles.WaveFinishedRecord
	for _, rec := range w.events() {
		if rec.Event.Topic == runfiles.TopicWaveFinished {
			runfiles.Decode(rec.Event, &fin)
		}
	}
	assert.Equal(t, []int{0}, fin.Succeeded)
	assert.Equal(t, []int{1, 2}, fin.Stopped)
	assert.Equal(t, []string{"worker 0"}, w.waveResults())
}
