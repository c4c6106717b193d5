package autopilot

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/internal/fakes/fakestest"
	"github.com/ralph-loop/ralph/tasks"
)

// planBacklog writes a backlog of n tasks for kind into a new directory
// and opens its source, as the dry run does; a command source lists with
// list.
func planBacklog(tb testing.TB, kind string, n int, list string) (tasks.Source, benchgen.Backlog) {
	tb.Helper()
	dir := tb.TempDir()
	bl, err := benchgen.WriteBacklog(dir, kind, n)
	require.NoError(tb, err)
	spec := tasks.Spec{Type: kind}
	if kind == "command" {
		spec.List, spec.Close = list, "true"
	}
	source, err := tasks.Open(spec, dir)
	require.NoError(tb, err)
	return source, bl
}

// catTasks is the list command of benchgen's command backlog.
const catTasks = "cat tasks.jsonl"

// checkPlan holds a plan to the backlog it was made of: every ready task
// planned once, every blocked one listed with the task it waits for.
func checkPlan(tb testing.TB, p Plan, bl benchgen.Backlog, parallel int) {
	tb.Helper()
	require.Len(tb, p.Tasks, bl.Ready)
	require.Len(tb, p.Blocked, bl.Blocked)
	seen := map[string]bool{}
	slots := 0
	for _, t := range p.Tasks {
		require.False(tb, seen[t.Task.ID], "%s planned twice", t.Task.ID)
		seen[t.Task.ID] = true
		require.Empty(tb, t.Invalid, t.Task.ID)
		require.NotEmpty(tb, t.Task.Criteria, "%s has its criteria", t.Task.ID)
		if t.Slot != "" {
			slots++
		}
	}
	require.Equal(tb, min(parallel, bl.Ready), slots)
	for _, t := range p.Blocked {
		require.Len(tb, t.Deps, 1, t.ID)
		require.False(tb, seen[t.ID], "%s is both ready and blocked", t.ID)
	}
}

// Every source's backlog plans as it is written: the generator and the
// plan agree on what is ready and what waits.
func TestPlanBacklogs(t *testing.T) {
	fakestest.UsePath(t)
	for _, kind := range benchgen.Sources {
		t.Run(kind, func(t *testing.T) {
			source, bl := planBacklog(t, kind, 60, catTasks)
			p, err := MakePlan(t.Context(), source, 4, 0)
			require.NoError(t, err)
			checkPlan(t, p, bl, 4)
		})
	}
}

// Planning looks at the tracker a fixed number of times whatever the
// backlog's size: no process per task. Each program a source runs (tk, bd,
// a command's list) writes a line to a log each time it starts.
func TestPlanRunsNoProcessPerTask(t *testing.T) {
	fakes := fakestest.Install(t)
	shims := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs.log")
	for _, tool := range []string{"tk", "bd"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $1\" >> %q\nexec %q \"$@\"\n", tool, runs, filepath.Join(fakes, tool))
		require.NoError(t, os.WriteFile(filepath.Join(shims, tool), []byte(script), 0o755))
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	// tk and bd list the ready and the blocked tasks with a command each;
	// a command source's one list says both.
	runsOf := map[string]int{"tk": 2, "beads": 2, "command": 1}
	for _, kind := range []string{"tk", "beads", "command"} {
		t.Run(kind, func(t *testing.T) {
			require.NoError(t, os.WriteFile(runs, nil, 0o644))
			source, bl := planBacklog(t, kind, 60, fmt.Sprintf("echo list >> %q; cat tasks.jsonl", runs))
			p, err := MakePlan(t.Context(), source, 4, 0)
			require.NoError(t, err)
			checkPlan(t, p, bl, 4)
			data, err := os.ReadFile(runs)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			require.Len(t, lines, runsOf[kind], "the plan of 60 tasks ran:\n%s", data)
		})
	}
}

// BenchmarkPlan plans a backlog of 2,000 tasks of each source (and a
// checklist of 10,000 items) as `ralph autopilot --dry-run` does; tk and
// beads run ralph's fakes of their programs. The dry run's target is
// under 2 s for 2,000 tasks and under 5 s for 10,000 checklist items,
// with memory that grows only with the tasks' own text (B/task).
func BenchmarkPlan(b *testing.B) {
	fakestest.UsePath(b)
	sizes := []struct {
		kind string
		n    int
	}{{"tk", 2000}, {"beads", 2000}, {"prd", 2000}, {"checklist", 2000}, {"command", 2000}, {"checklist", 10000}}
	for _, s := range sizes {
		b.Run(fmt.Sprintf("%s-%d", s.kind, s.n), func(b *testing.B) {
			source, bl := planBacklog(b, s.kind, s.n, catTasks)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				p, err := MakePlan(b.Context(), source, 4, 0)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Tasks) != bl.Ready || len(p.Blocked) != bl.Blocked {
					b.Fatalf("planned %d ready and %d blocked, want %d and %d", len(p.Tasks), len(p.Blocked), bl.Ready, bl.Blocked)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(s.n), "B/task")
		})
	}
}
