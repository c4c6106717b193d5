//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubbornScript: the agent ignores SIGTERM, starts a child that ignores it
// too, and would run for a minute.
func stubbornScript() agentScript {
	return agentScript{Steps: []step{{IgnoreSIGTERM: true, SpawnChild: true, SleepMS: 60000}}}
}

func TestSignalsLeaveNoAgentBehind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		signals []syscall.Signal
		grace   string
	}{
		{"SIGINT waits out the grace period, then kills", []syscall.Signal{syscall.SIGINT}, "1"},
		{"SIGTERM behaves like SIGINT", []syscall.Signal{syscall.SIGTERM}, "1"},
		{"a second Ctrl-C skips the grace period", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, "600"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", "event_loop:\n  kill_grace_seconds: "+tc.grace+"\n"+twoHatConfig[len("event_loop:\n"):]+agentCLI())
			w.script(stubbornScript())
			loop, stderr := w.startRalph("loop")
			childPid := filepath.Join(w.state, "child.pid")
			waitFor(t, "the agent's child", func() bool { return w.pidFile(childPid) > 0 })
			pgid := w.pidFile(filepath.Join(w.dir, ".ralph", "agent.pgid"))
			require.Positive(t, pgid)

			for i, sig := range tc.signals {
				require.NoError(t, loop.Process.Signal(sig))
				if i == 0 && len(tc.signals) > 1 {
					// A second signal sent before ralph took the first
					// would merge with it in the kernel.
					waitFor(t, "ralph to say it is stopping", func() bool {
						return strings.Contains(stderr.String(), "interrupt again to kill it at once")
					})
				}
			}
			done := make(chan error, 1)
			go func() { done <- loop.Wait() }()
			select {
			case err := <-done:
				assert.Equal(t, 130, exitCodeOf(err), stderr.String())
			case <-time.After(60 * time.Second):
				t.Fatalf("ralph did not exit; with a 600s grace only the second signal ends it:\n%s", stderr.String())
			}
			assert.True(t, processGone(-pgid), "the agent's process group is gone")
			assert.True(t, processGone(w.pidFile(childPid)), "the agent's child is gone")
			assert.Contains(t, stderr.String(), "iteration 1 interrupted in", "not \"done\"")
			assert.Equal(t, []string{"ralph task.start", "finished ralph interrupted", "terminate interrupted"}, w.flow())
			assert.Contains(t, w.read(".ralph/state.json"), `"reason": "interrupted"`)
		})
	}
}
