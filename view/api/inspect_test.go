package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view/api"
)

const inspectRunID = "20261125-100000-ab12"

// keptPrompt writes a prompt file of the run and returns the
// iteration.started line that names it.
func keptPrompt(t *testing.T, dir string, n, attempt int, text string) events.Event {
	t.Helper()
	name := runfiles.Prompt(n, attempt)
	path := filepath.Join(runfiles.In(dir).Run(inspectRunID), name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	sum := sha256.Sum256([]byte(text))
	rec := runfiles.IterationStartedRecord{Iteration: n, Hat: "builder", Prompt: name, PromptBytes: len(text), PromptSHA256: hex.EncodeToString(sum[:])}
	if attempt > 1 {
		rec.Attempt = attempt
	}
	return runfiles.RalphEvent(runfiles.TopicIterationStarted, rec)
}

func inspectWorkspace(t *testing.T, lines func(dir string) []events.Event) string {
	t.Helper()
	dir, log := workspace(t)
	evs := append([]events.Event{runfiles.RalphEvent(runfiles.TopicLoopStarted, runfiles.LoopStartedRecord{RunID: inspectRunID})}, lines(dir)...)
	for _, ev := range evs {
		require.NoError(t, events.AppendTo(log, ev))
	}
	require.NoError(t, os.WriteFile(runfiles.In(dir).CurrentEvents(), []byte(filepath.Join(runfiles.DirName, filepath.Base(log))+"\n"), 0o600))
	return dir
}

func finished(n int, trees *runfiles.TreesRecord) events.Event {
	return runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{Iteration: n, Hat: "builder",
		Outcome: runfiles.OutcomeSuccess, Said: "done", Trees: trees})
}

func TestInspectPromptIsTheLastAttemptsWithTheReadersSecretsHidden(t *testing.T) {
	t.Parallel()
	dir := inspectWorkspace(t, func(dir string) []events.Event {
		return []events.Event{
			keptPrompt(t, dir, 1, 1, "first try"),
			runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{Iteration: 1, Outcome: runfiles.OutcomeInterrupted}),
			keptPrompt(t, dir, 1, 2, "second try with sk-reader-secret-0123"),
			finished(1, nil),
		}
	})
	r := redact.New([]string{"READER_TOKEN=sk-reader-secret-0123"}, nil)
	run, err := api.InspectRun(t.Context(), dir, "", r)
	require.NoError(t, err)
	p, err := run.Prompt(1, r)
	require.NoError(t, err)
	assert.Equal(t, 2, p.Attempt)
	assert.Equal(t, 2, p.Attempts)
	assert.True(t, p.Intact)
	assert.Equal(t, "second try with [redacted:READER_TOKEN]", p.Text)
	assert.Equal(t, ".ralph/runs/"+inspectRunID+"/prompt-0001.attempt2.md", p.File)
}

func TestInspectSaysWhichIterationsExist(t *testing.T) {
	t.Parallel()
	dir := inspectWorkspace(t, func(dir string) []events.Event {
		return []events.Event{keptPrompt(t, dir, 1, 1, "a"), keptPrompt(t, dir, 2, 1, "b"), keptPrompt(t, dir, 3, 1, "c"), keptPrompt(t, dir, 5, 1, "e")}
	})
	run, err := api.InspectRun(t.Context(), dir, "", nil)
	require.NoError(t, err)
	_, err = run.Prompt(9, nil)
	require.Error(t, err)
	assert.Equal(t, "run "+inspectRunID+" has no iteration 9: it has iterations 1–3, 5", err.Error())
	assert.NotEmpty(t, hint.Of(err))
}

func TestInspectOfARunFromBeforePromptsWereKeptSaysSo(t *testing.T) {
	t.Parallel()
	dir := inspectWorkspace(t, func(string) []events.Event {
		return []events.Event{runfiles.RalphEvent(runfiles.TopicIterationStarted, runfiles.IterationStartedRecord{Iteration: 1, Hat: "builder"}), finished(1, nil)}
	})
	run, err := api.InspectRun(t.Context(), dir, "", nil)
	require.NoError(t, err)
	_, err = run.Prompt(1, nil)
	assert.ErrorContains(t, err, "the run is from before ralph kept prompts")
	_, err = run.Diff(t.Context(), 1, nil)
	assert.ErrorContains(t, err, "the run is from before ralph recorded them")
}

func TestInspectTellsAChangedPromptFileAndRefusesALink(t *testing.T) {
	t.Parallel()
	dir := inspectWorkspace(t, func(dir string) []events.Event {
		return []events.Event{keptPrompt(t, dir, 1, 1, "as written"), keptPrompt(t, dir, 2, 1, "b")}
	})
	runDir := runfiles.In(dir).Run(inspectRunID)
	require.NoError(t, os.WriteFile(filepath.Join(runDir, runfiles.Prompt(1, 1)), []byte("as cut"), 0o600))
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("not ralph's"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(runDir, runfiles.Prompt(2, 1))))
	require.NoError(t, os.Symlink(secret, filepath.Join(runDir, runfiles.Prompt(2, 1))))

	run, err := api.InspectRun(t.Context(), dir, "", nil)
	require.NoError(t, err)
	p, err := run.Prompt(1, nil)
	require.NoError(t, err)
	assert.False(t, p.Intact)
	_, err = run.Prompt(2, nil)
	assert.ErrorContains(t, err, "link")
}

func TestInspectDiffRefusesWhatIsNotAnObjectName(t *testing.T) {
	t.Parallel()
	dir := inspectWorkspace(t, func(dir string) []events.Event {
		return []events.Event{
			keptPrompt(t, dir, 1, 1, "a"),
			finished(1, &runfiles.TreesRecord{Before: "--output=/tmp/x", After: "0123456789012345678901234567890123456789"}),
			keptPrompt(t, dir, 2, 1, "b"),
			finished(2, &runfiles.TreesRecord{Unavailable: "the workspace is not in a git repository"}),
		}
	})
	run, err := api.InspectRun(t.Context(), dir, "", nil)
	require.NoError(t, err)
	_, err = run.Diff(t.Context(), 1, nil)
	assert.ErrorContains(t, err, "not a git object name")
	_, err = run.Diff(t.Context(), 2, nil)
	assert.ErrorContains(t, err, "what iteration 2 changed is not available: the workspace is not in a git repository")
}
