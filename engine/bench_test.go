package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// BenchmarkIteration measures ralph's own cost per iteration — choosing the
// hat, building the prompt, the log appends, deciding the agent's events,
// the checkpoint writes — with an agent that answers at once. One op is one
// iteration.
func BenchmarkIteration(b *testing.B) {
	fb := &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build it")}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}}},
		"reviewer": {{text: tagged("build.task", "again")}},
	}}
	s := settings()
	s.MaxIterations = b.N
	e := newBenchEngine(b, fb, s)
	b.ResetTimer()
	out, err := e.Run(context.Background())
	b.StopTimer()
	if err != nil || out.Iterations != b.N {
		b.Fatalf("ran %d iterations (%v), want %d", out.Iterations, err, b.N)
	}
}

// BenchmarkRebuildState measures folding a whole log into a run state, what
// a resume without a checkpoint does. One op folds a log of 10,000 lines.
func BenchmarkRebuildState(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	log, err := events.OpenLog(path)
	if err != nil {
		b.Fatal(err)
	}
	var batch []events.Event
	batch = append(batch, runfiles.RalphEvent(runfiles.TopicLoopStarted, runfiles.LoopStartedRecord{RunID: "bench"}))
	for i := range 2000 {
		batch = append(batch,
			runfiles.RalphEvent(runfiles.TopicIterationStarted, runfiles.IterationStartedRecord{Iteration: i + 1, Hat: "builder"}),
			events.Event{Topic: "build.done", Payload: events.StringPayload(fmt.Sprintf("step %d", i)), Iteration: i + 1, Hat: "builder", Source: events.SourceAgent},
			runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{Iteration: i + 1, Hat: "builder", Outcome: runfiles.OutcomeSuccess}),
			runfiles.RalphEvent(runfiles.TopicEventRouted, runfiles.RoutedRecord{Topic: "build.done", To: []string{"reviewer"}}),
			runfiles.RalphEvent(runfiles.TopicIterationSettled, runfiles.IterationSettledRecord{Iteration: i + 1, Progress: true}))
	}
	if err := log.AppendBatch(batch); err != nil {
		b.Fatal(err)
	}
	_ = log.Close()
	reg := twoHats(b)
	b.ResetTimer()
	for b.Loop() {
		st := runfiles.NewRunState()
		recs, err := events.NewReader(path, 0).Read()
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range recs {
			st.Apply(r, reg)
		}
		if st.Iteration != 2000 {
			b.Fatalf("folded to iteration %d", st.Iteration)
		}
	}
}

func newBenchEngine(b *testing.B, fb Backend, s Settings) *Engine {
	e, err := New(Options{Workspace: b.TempDir(), Objective: "bench", Settings: s, Hats: twoHats(b),
		Backend: fb, RalphBin: "/usr/local/bin/ralph", Reporter: nopReporter{}})
	if err != nil {
		b.Fatal(err)
	}
	return e
}
