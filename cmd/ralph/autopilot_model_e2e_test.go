package main

// TestE2EAutopilotStoryModel runs the autopilot with the real Claude Code
// CLI against the scripted fake model (internal/fakemodel), as
// TestE2EAgent does for a loop:
//
//	RALPH_AGENTS_DIR=$PWD/.cache/agents go test -count=1 -run E2EAutopilotStoryModel ./cmd/ralph/
//
// Without RALPH_AGENTS_DIR the test skips.

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

// A prd.json story's "model" is the model its loop's agent asks for: the
// model server sees it in every request of that loop, over cli.model.
func TestE2EAutopilotStoryModel(t *testing.T) {
	// Not parallel: it runs the real agent CLIs (see agentLoopTimeout).
	dir := os.Getenv("RALPH_AGENTS_DIR")
	if dir == "" {
		t.Skip("RALPH_AGENTS_DIR is not set: run `make e2e` (it installs the pinned agent CLIs with `make agents` and sets it)")
	}
	bin := agentBinary(t, dir, "claude")
	srv := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{
			Command: `echo done > US-1.txt && git add US-1.txt && git commit -qm "do the task"`}}}},
		{Text: "Committed. " + tag("LOOP_COMPLETE", "done")},
	}})
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
	w.write("ralph.yml", fmt.Sprintf("cli:\n  backend: claude\n  command: %s\n  model: config-model-1\n", bin)+
		"event_loop:\n  max_iterations: 3\n  completion_confirmations: 1\n  max_consecutive_failures: 1\n"+
		"autopilot:\n  source: {type: prd, path: prd.json}\n")
	w.write("prd.json", `{"userStories": [{"id": "US-1", "title": "Write US-1.txt", "priority": 0, "passes": false, "model": "story-model-1"}]}`)
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the prd")

	r := w.ralphAgent("claude", url, "autopilot")
	t.Logf("autopilot with claude: exit %d in %s", r.code, r.elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			logAgentRun(t, w, srv, r)
			t.Logf("the loop's output:\n%s", w.read(".ralph/autopilot/US-1/loop.log"))
		}
	})
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, []string{"US-1"}, w.mergedOrder())

	var main int
	for _, req := range srv.Requests() {
		if req.Kind != fakemodel.KindMain {
			continue
		}
		main++
		assert.Equal(t, "story-model-1", req.Model, "request %d asks for the story's model, not cli.model", req.Seq)
	}
	assert.Equal(t, 2, main, "both turns of the script were asked for")
}
