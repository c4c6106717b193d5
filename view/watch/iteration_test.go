package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// keepPrompt gives the loop writeLoop wrote a kept prompt for iteration
// 1, as a loop of this version keeps it.
func keepPrompt(t *testing.T, ws, runID, prompt string) {
	t.Helper()
	run := runfiles.In(ws).Run(runID)
	require.NoError(t, os.MkdirAll(run, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(run, runfiles.Prompt(1, 1)), []byte(prompt), 0o600))
	logPath := filepath.Join(ws, runfiles.DirName, "events-"+runID+".jsonl")
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(prompt))
	started := `"hat":"planner","iteration":1}`
	require.Contains(t, string(data), started)
	data = []byte(strings.Replace(string(data), started, fmt.Sprintf(`"hat":"planner","iteration":1,"prompt":%q,"prompt_bytes":%d,"prompt_sha256":%q}`,
		runfiles.Prompt(1, 1), len(prompt), hex.EncodeToString(sum[:])), 1))
	require.NoError(t, os.WriteFile(logPath, data, 0o644))
}

func TestEnterOnAnIterationOpensItsPromptOutputAndDiff(t *testing.T) {
	dir := t.TempDir()
	const runID = "20261122-100000-abcdef"
	writeLoop(t, dir, runID, "planner", "I will plan the flag.")
	keepPrompt(t, dir, runID, "# Objective\n\nAdd a --json flag <b>now</b>\n")
	m := testModel(t, dir, "")

	press(m, "up", "up", "up", "enter")
	require.NotNil(t, m.pane, "enter on iteration.started opens the iteration")
	s := screen(t, m)
	assert.Contains(t, s, "── iteration 1 · prompt, output, diff · esc closes")
	assert.Contains(t, s, "Add a --json flag <b>now</b>")
	assert.Contains(t, s, "final text:\n  I will plan the flag.")
	assert.Contains(t, s, "read README.md")
	assert.Contains(t, s, "diff: iteration 1 of run "+runID+" has not finished", "a part missing says why")

	press(m, "esc")
	assert.Nil(t, m.pane)
	press(m, "down", "enter")
	assert.Nil(t, m.pane, "enter on an agent's event opens its payload")
	require.NotNil(t, m.payload)
	press(m, "esc", "i")
	require.NotNil(t, m.pane, "i opens the event's iteration")
	assert.Contains(t, screen(t, m), "Add a --json flag")

	press(m, "esc", "end", "i")
	assert.Nil(t, m.pane)
	assert.Equal(t, "this event belongs to no iteration", m.notice, "the commit line names none")
}
