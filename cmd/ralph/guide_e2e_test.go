package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guideScript: the coordinator's first run waits for release before it
// hands out the task, so guidance sent meanwhile is pending behind it;
// the builder writes done.txt; the coordinator then completes.
func guideScript() agentScript {
	return agentScript{ByHat: map[string][]step{
		"ralph": {
			{Sh: `touch "$SCRIPTAGENT_STATE/coordinating"; while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.05; done`,
				Say: tag("build.task", "go")},
			{WhenFile: map[string]string{"done.txt": "done"}, Say: tag("LOOP_COMPLETE", "built"),
				Else: &step{Say: tag("build.task", "go")}},
		},
		"builder": {{Write: map[string]string{"done.txt": "done\n"}, Say: tag("build.done", "built")}},
	}}
}

// Guidance sent from the command line, the API, MCP and ralph watch's g key
// while the coordinator works reaches the next iteration's prompt, the
// builder's though the coordinator would own an unrouted event, and no
// later one.
func TestGuidanceReachesTheNextIterationOnce(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", askConfig+agentCLI())
	w.script(guideScript())
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the coordinator at work", func() bool { return fileExists(filepath.Join(w.state, "coordinating")) })

	r := w.ralph("guide", "from the command line: keep the API")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "guidance sent; the run's next iteration reads it")
	empty := w.ralph("guide", "  ")
	assert.NotEqual(t, 0, empty.code)
	assert.Contains(t, empty.stderr, "the guidance has no text\nralph: hint: ")

	s := startServe(t, w.dir)
	code, body := s.do(http.MethodPost, "/api/guidance", false, `{"text": "no token"}`)
	assert.Equal(t, http.StatusUnauthorized, code, body)
	code, body = s.do(http.MethodPost, "/api/guidance", true, `{"text": ""}`)
	assert.Equal(t, http.StatusBadRequest, code, body)
	assert.Contains(t, body, `"hint":`)
	assert.Contains(t, s.post("/api/guidance", `{"text": "from the API: use sqlite"}`), "guidance sent")

	cs := mcpSession(t, w.dir)
	c := callTool(t, cs, "guide", map[string]any{"text": "from MCP: small commits"}).ok(t)
	assert.Equal(t, "guidance sent; the run's next iteration reads it", c.text)
	sameFailure(t, callTool(t, cs, "guide", map[string]any{"text": " "}), w.ralph("guide", " "))

	guided := 3
	if tm := tmuxOrNil(t); tm != nil {
		ts := tm.session("watch", 80, 24, nil, watchShell(w.dir))
		ts.waitFor("g guide")
		ts.keys("g")
		ts.waitFor("guidance for the next iteration")
		ts.keys("-l", "from watch: mind the tests")
		ts.keys("Enter")
		ts.waitFor("guidance sent")
		guided++
	}
	require.Equal(t, guided, w.count("human.guidance"))
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.NoError(t, loop.Wait(), stderr.String())

	texts := []string{"from the command line: keep the API", "from the API: use sqlite", "from MCP: small commits", "from watch: mind the tests"}[:guided]
	next := w.prompt(2)
	assert.Contains(t, next, "Builder", "the task's hat runs next, not the coordinator the guidance would wait for")
	for _, text := range texts {
		assert.Equal(t, 1, strings.Count(next, text), "the next prompt carries %q once", text)
		assert.Contains(t, next, "human.guidance` from a person")
		assert.NotContains(t, w.prompt(1), text)
		for n := 3; fileExists(filepath.Join(w.state, "prompt-"+strconv.Itoa(n)+".txt")); n++ {
			assert.NotContains(t, w.prompt(n), text, "prompt %d", n)
		}
	}
	for _, rec := range w.events() {
		if rec.Event.Topic == "human.guidance" {
			assert.Equal(t, "human", rec.Event.Source)
		}
	}
}

// tmuxOrNil is a tmux server of the test's own, or nil where tmux is not
// installed: the parts of a test that need no terminal still run.
func tmuxOrNil(t *testing.T) *tmuxServer {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Log("tmux is not installed: ralph watch's part of the test is left out")
		return nil
	}
	return newTmux(t)
}
