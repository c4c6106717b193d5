//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestSignalWhilePacedInterruptsTheRun: SIGTERM during a pacing wait ends
// the run at once as interrupted (exit 130), resumable, as it does during a
// rate limit's wait.
func TestSignalWhilePacedInterruptsTheRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", fmt.Sprintf(pacingConfig, agentBin))
	w.script(agentScript{ByHat: map[string][]step{
		"builder": {{PrintFile: w.claudeStream("builder.jsonl", "Written. "+tag("build.done", "hello.txt written"), 600)}},
	}})
	cmd, stderr := w.startRalph("loop")
	waitFor(t, "ralph to wait for the tokens_per_hour budget", func() bool { return len(pacedLines(w)) > 0 })
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, exitcode.Interrupted, exitCodeOf(cmd.Wait()), stderr.String())

	recs := w.events()
	end := recs[len(recs)-1].Event
	require.Equal(t, runfiles.TopicLoopTerminate, end.Topic)
	var term runfiles.TerminateRecord
	require.NoError(t, json.Unmarshal(end.Payload, &term))
	assert.Equal(t, runfiles.ReasonInterrupted, term.Reason)
	assert.Contains(t, term.Message, "interrupted while paced (tokens_per_hour: 600/1000, until ")
	assert.Equal(t, 1, w.agentRuns(), "no iteration started after the signal")
}
