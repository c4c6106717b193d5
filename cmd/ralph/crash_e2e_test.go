package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

const crashConfig = `event_loop:
  prompt: Do five rounds of build and review.
  max_iterations: 300
  max_consecutive_failures: 50
  kill_grace_seconds: 1
hats:
  builder:
    triggers: [build.task]
    publishes: [build.done, build.log, build.metrics]
  logger:
    triggers: [build.log, build.metrics]
  reviewer:
    triggers: [build.done]
    publishes: [review.approved, build.task]
`

// crashScript publishes several events per iteration, some with ralph emit
// and some as tags, each payload unique to the agent run ({{run}}).
func crashScript() agentScript {
	return agentScript{ByHat: map[string][]step{
		"ralph": {{WhenFile: map[string]string{"review.ok": "yes"},
			Say:  "All rounds reviewed. " + tag("LOOP_COMPLETE", "complete {{run}}"),
			Else: &step{Say: tag("build.task", "start {{run}}"), SleepMS: 20}}},
		"builder": {{Append: map[string]string{"progress.txt": "round\n"},
			Emit: []scriptEmit{{Topic: "build.log", Payload: "log {{run}}"}, {Topic: "build.done", Payload: "done {{run}}"}},
			Say:  "Built. " + tag("build.metrics", "metrics {{run}}"), SleepMS: 30}},
		"logger": {{Say: "noted {{run}}", SleepMS: 10}},
		"reviewer": {{WhenLines: map[string]int{"progress.txt": 5},
			Write: map[string]string{"review.ok": "yes"},
			Say:   tag("review.approved", "approved {{run}}"),
			Else:  &step{Say: tag("build.task", "again {{run}}"), SleepMS: 20}}},
	}}
}

// killPlan lists the moments to kill ralph: each fault point at several
// occurrences, then wall-clock times that land inside agent runs.
func killPlan() []string {
	var plan []string
	for _, n := range []int{1, 2, 3, 4, 6, 9, 13, 19} {
		for _, p := range []string{engine.FaultAppendBefore, engine.FaultAppendTorn, engine.FaultAppendAfter,
			engine.FaultCheckpointTemp, engine.FaultCheckpointAfter, engine.FaultAgentStarted} {
			plan = append(plan, fmt.Sprintf("%s:%d", p, n))
		}
	}
	for ms := 10; ms <= 400; ms += 20 {
		plan = append(plan, fmt.Sprintf("time:%d", ms))
	}
	return plan
}

func TestE2ECrashAnywhereAndResume(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", crashConfig+agentCLI())
	w.script(crashScript())

	tried, fired, runs := 0, 0, 0
	for _, spec := range killPlan() {
		tried++
		r := w.ralphKilledAt(spec, w.hasRun())
		switch {
		case r.killed:
			fired++
			w.assertStateReadable()
			if w.completedInLog() {
				// Killed after loop.terminate: the run ended all the same.
				runs++
				w.assertRunIntact()
				w.startOver()
			}
		case r.code == 0:
			runs++
			w.assertRunIntact()
			w.startOver()
		default:
			t.Fatalf("kill point %s: ralph exited %d:\n%s", spec, r.code, r.stderr)
		}
	}
	// Finish the run in progress without further kills.
	if w.hasRun() {
		r := w.ralph("loop", "--resume")
		require.Equal(t, 0, r.code, r.stderr)
		runs++
		w.assertRunIntact()
	}
	t.Logf("kill points tried: %d, fired: %d, survived: %d; runs completed: %d", tried, fired, fired, runs)
	fmt.Printf("crash test: %d kill points tried, %d fired, %d survived, %d runs completed\n", tried, fired, fired, runs)
	assert.GreaterOrEqual(t, fired, 50, "at least 50 kills must land")
}

type killResult struct {
	result
	killed bool
}

// ralphKilledAt runs ralph loop (or --resume) so that it dies at spec: a
// fault point, or time:MS after it starts.
func (w *workspace) ralphKilledAt(spec string, resume bool) killResult {
	w.t.Helper()
	args := []string{"loop"}
	if resume {
		args = append(args, "--resume")
	}
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	var delay time.Duration
	if ms, ok := strings.CutPrefix(spec, "time:"); ok {
		d, err := time.ParseDuration(ms + "ms")
		require.NoError(w.t, err)
		delay = d
	} else {
		cmd.Env = append(cmd.Env, crashEnv+"="+spec)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(w.t, cmd.Start())
	if delay > 0 {
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return killResult{result: result{stderr: stderr.String()}, killed: true}
	}
	return killResult{result: result{code: exitCodeOf(err), stderr: stderr.String()}}
}

func (w *workspace) assertStateReadable() {
	w.t.Helper()
	_, _, err := runfiles.Checkpoint{Path: filepath.Join(w.dir, ".ralph", "state.json")}.Load()
	if err != nil && !errors.Is(err, runfiles.ErrNoState) {
		w.t.Fatalf("state.json unreadable after a kill: %v", err)
	}
}

// assertRunIntact checks the completed run's log: every event the agent
// wrote is there once and was decided (routed or rejected) exactly once,
// and every event the agent reports having emitted is in the log once.
func (w *workspace) assertRunIntact() {
	w.t.Helper()
	recs := w.events()
	decided := map[int64]int{}
	agentLines := map[int64]events.Event{}
	payloads := map[string]int{}
	for _, r := range recs {
		if r.Err != nil {
			continue
		}
		ev := r.Event
		switch {
		case ev.Source != events.SourceRalph:
			agentLines[r.Offset] = ev
			payloads[ev.Topic+" "+ev.PayloadText()]++
		case ev.Topic == "event.routed" || ev.Topic == "event.rejected":
			var d struct{ Offset int64 }
			require.NoError(w.t, json.Unmarshal(ev.Payload, &d))
			decided[d.Offset]++
		}
	}
	for off, ev := range agentLines {
		assert.Equal(w.t, 1, decided[off], "event %s %q at offset %d decided %d times", ev.Topic, ev.PayloadText(), off, decided[off])
	}
	for off := range decided {
		_, ok := agentLines[off]
		assert.True(w.t, ok, "a decision refers to offset %d, which is no agent event", off)
	}
	for key, n := range payloads {
		assert.Equal(w.t, 1, n, "%s appears %d times", key, n)
	}
	for _, key := range w.emittedByAgent() {
		assert.Equal(w.t, 1, payloads[key], "emitted %q is in the log %d times", key, payloads[key])
	}
	assert.Equal(w.t, "terminate completed", last(w.flow()))
}

func (w *workspace) emittedByAgent() []string {
	f, err := os.Open(filepath.Join(w.state, "emitted.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct{ Topic, Payload string }
		require.NoError(w.t, json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e.Topic+" "+e.Payload)
	}
	return out
}

// completedInLog reports whether the current run's log says it completed.
func (w *workspace) completedInLog() bool {
	w.t.Helper()
	if _, err := os.Stat(filepath.Join(w.dir, ".ralph", "current-events")); err != nil {
		return false
	}
	return last(w.flow()) == "terminate completed"
}

// hasRun reports whether an unfinished run exists to resume: a kill before
// loop.started reached the log leaves none, and the user starts again.
func (w *workspace) hasRun() bool {
	rel, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "current-events"))
	if err != nil {
		return false
	}
	recs, err := events.NewReader(filepath.Join(w.dir, strings.TrimSpace(string(rel))), 0).Read()
	if err != nil {
		return false
	}
	started, completed := false, false
	for _, r := range recs {
		started = started || r.Event.Topic == "loop.started"
		completed = completed || (r.Event.Topic == "loop.terminate" && strings.Contains(string(r.Event.Payload), `"completed"`))
	}
	return started && !completed
}

// startOver resets the workspace's progress for the next run.
func (w *workspace) startOver() {
	for _, f := range []string{"progress.txt", "review.ok"} {
		_ = os.Remove(filepath.Join(w.dir, f))
	}
	_ = os.Remove(filepath.Join(w.state, "emitted.jsonl"))
}
