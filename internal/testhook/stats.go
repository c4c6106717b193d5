package testhook

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// The soak-test hook appends ralph's own resource use (goroutines, open
// descriptors, live heap, resident memory and its peak) to a file, one
// ResourceSample a line: after a loop's first iteration and every
// statsEvery-th (WithStats), so a long run can be checked for leaks from
// outside, and as any command exits (ExitStats), so its peak memory can be
// bounded.
const statsEvery = 50

// ResourceSample is one line of the stats file.
type ResourceSample struct {
	Iteration  int    `json:"iteration"`
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	HeapInUse  uint64 `json:"heap_inuse"` // after a GC: live heap
	RSSKiB     int    `json:"rss_kib"`
	// PeakRSSKiB is the most ralph has held resident so far (VmHWM).
	PeakRSSKiB int `json:"peak_rss_kib"`
	// Exit marks the sample taken as the command ends.
	Exit bool `json:"exit,omitempty"`
}

// statsReporter passes everything on to the reporter it wraps and samples
// ralph's resource use as iterations finish.
type statsReporter struct {
	engine.Reporter
	path string
}

// WithStats wraps rep to sample as iterations finish, into the file at path.
func WithStats(path string, rep engine.Reporter) engine.Reporter {
	return &statsReporter{Reporter: rep, path: path}
}

// TaskComplete keeps SPEC mode's checked boxes reaching the wrapped view.
func (s *statsReporter) TaskComplete(index int, text string) {
	if tr, ok := s.Reporter.(engine.TaskReporter); ok {
		tr.TaskComplete(index, text)
	}
}

func (s *statsReporter) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	s.Reporter.IterationFinished(it, res)
	if it.N != 1 && it.N%statsEvery != 0 {
		return
	}
	appendSample(s.path, sampleResources(it.N))
}

// ExitStats appends a last sample, marked Exit, to the file at path: the
// peak memory of a whole command.
func ExitStats(path string) {
	s := sampleResources(0)
	s.Exit = true
	appendSample(path, s)
}

func appendSample(path string, s ResourceSample) {
	line, _ := json.Marshal(s)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

func sampleResources(iteration int) ResourceSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, _ := os.ReadDir("/proc/self/fd")
	return ResourceSample{Iteration: iteration, Goroutines: runtime.NumGoroutine(),
		FDs: len(fds) - 1, HeapInUse: ms.HeapInuse, RSSKiB: statusKiB("VmRSS:"), PeakRSSKiB: statusKiB("VmHWM:")} // -1: the directory read itself
}

// statusKiB is a figure in kB of /proc/self/status (VmRSS:, VmHWM:), 0
// where there is none.
func statusKiB(field string) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
