package view_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// BenchmarkWatchRefresh measures what `ralph watch` pays each time a run's
// log grows: one op appends an iteration's 8 lines to a loop's log of
// 10,000 lines and reads the workspace again. The reader keeps its place
// in the log, so the cost is the new lines' and the checkpoint's, not the
// log's.
func BenchmarkWatchRefresh(b *testing.B) {
	ws := b.TempDir()
	dir := filepath.Join(ws, runfiles.DirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	name := filepath.Join(runfiles.DirName, "events-bench.jsonl")
	_, err := benchgen.WriteFile(filepath.Join(ws, name), 10_000)
	if err != nil {
		b.Fatal(err)
	}
	st := runfiles.NewRunState()
	st.RunID, st.EventsFile, st.MaxIterations = "bench", name, 100
	if err := os.WriteFile(filepath.Join(dir, runfiles.CurrentEventsFile), []byte(name+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	checkpoint := runfiles.Checkpoint{Path: filepath.Join(dir, runfiles.StateFile)}
	log, err := os.OpenFile(filepath.Join(ws, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	// The engine writes its checkpoint as each agent starts: the log past
	// it is one iteration's lines.
	save := func() {
		info, err := log.Stat()
		if err == nil {
			st.Offset = info.Size()
			err = checkpoint.Save(st, runfiles.PhaseRunning, time.Now())
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	save()
	r := view.NewWorkspaceReader(ws, nil)
	if w := r.Read(""); w.Loop == nil {
		b.Fatal("the reader sees no loop")
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		save()
		b.StartTimer()
		for k := range len(benchgen.Cycle) {
			if _, err := fmt.Fprintln(log, benchgen.Line(10_000+i*len(benchgen.Cycle)+k)); err != nil {
				b.Fatal(err)
			}
		}
		if w := r.Read(""); w.Loop == nil {
			b.Fatal("the reader lost the loop")
		}
	}
}
