package backends

// The conformance suite's case table: which recorded streams each CLI's
// fake replays (see conformance_test.go). It has no build tag, so the CLIs'
// own test files, which add entries, build on every system; the suite that
// runs the cases drives processes with signals and is Unix-only.

import (
	"sync"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// conformanceCase names the recorded streams a CLI's fake replays. Paths
// are relative to testdata/.
type conformanceCase struct {
	Normal      string // a successful turn whose final text holds LOOP_COMPLETE
	NormalTools bool   // the normal turn wrote a file and ran a shell command
	Error       string // a turn that failed
	ErrorStderr string // what the CLI printed on stderr with Error, if anything
	ErrorExit   int    // the exit status the CLI gave with Error
	// ErrorFailure is the Failure kind expected for Error; empty accepts any
	// failure.
	ErrorFailure events.FailureKind
}

// conformanceCases holds the explicit entries; see the file comment.
var conformanceCases = map[string]conformanceCase{
	"claude": {
		Normal:       "claude/stream-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "claude/stream-json-api-error-400.jsonl",
		ErrorExit:    1,
		ErrorFailure: events.FailureAgent,
	},
	"command": {
		Normal:       "command/tool-loop.txt",
		Error:        "command/error.txt",
		ErrorStderr:  "command/error.stderr.txt",
		ErrorExit:    1,
		ErrorFailure: events.FailureExit,
	},
}

// fakeGrace is the kill grace in process tests: long enough for a
// cooperative fake to exit on SIGTERM, short enough to keep tests fast.
const fakeGrace = 300 * time.Millisecond

// activities collects reported activity; Run calls report from one
// goroutine, the mutex only satisfies the race detector across tests.
type activities struct {
	mu   sync.Mutex
	list []events.Activity
}

func (a *activities) report(x events.Activity) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, x)
}

func (a *activities) count(kind events.ActivityKind) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, x := range a.list {
		if x.Kind == kind {
			n++
		}
	}
	return n
}
