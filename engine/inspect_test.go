package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// recordsOf decodes the payloads of ralph's lines of topic.
func recordsOf[T any](t *testing.T, dir, topic string) []T {
	t.Helper()
	var out []T
	for _, r := range readLog(t, dir) {
		if r.Err == nil && r.Event.Topic == topic && r.Event.Source == events.SourceRalph {
			var v T
			runfiles.Decode(r.Event, &v)
			out = append(out, v)
		}
	}
	return out
}

func TestEveryIterationsPromptIsKeptRedactedBesideItsOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) {
		o.Objective = "Build the thing with " + secret + "."
		o.Redactor = redact.New([]string{secretName + "=" + secret}, nil)
	})
	out, err := e.Run(t.Context())
	require.NoError(t, err)

	started := recordsOf[runfiles.IterationStartedRecord](t, dir, runfiles.TopicIterationStarted)
	require.Len(t, started, 3)
	run := runfiles.In(dir).Run(out.RunID)
	for i, r := range started {
		require.Equal(t, runfiles.Prompt(i+1, 1), r.Prompt)
		data, err := os.ReadFile(filepath.Join(run, r.Prompt))
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		assert.Equal(t, len(data), r.PromptBytes)
		assert.Equal(t, hex.EncodeToString(sum[:]), r.PromptSHA256)
		assert.Contains(t, string(data), "Build the thing with "+secretMask)
		assert.NotContains(t, string(data), secret)
		assert.FileExists(t, filepath.Join(run, runfiles.RawOutput(i+1, 1)), "the output sits beside its prompt")
		assert.Zero(t, r.Attempt)
	}
}

// An attempt whose prompt or output a crash or an interruption left behind
// is never overwritten: the repeat takes the next number, for both files.
func TestARepeatedIterationKeepsEachAttemptsPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	assert.Equal(t, 1, nextAttempt(dir, 3))
	require.NoError(t, os.WriteFile(filepath.Join(dir, runfiles.Prompt(3, 1)), nil, 0o600))
	assert.Equal(t, 2, nextAttempt(dir, 3), "a prompt written before a crash")
	require.NoError(t, os.WriteFile(filepath.Join(dir, runfiles.RawOutput(3, 2)), nil, 0o600))
	assert.Equal(t, 3, nextAttempt(dir, 3), "an attempt from before ralph kept prompts")
	assert.Equal(t, "prompt-0003.attempt3.md", runfiles.Prompt(3, 3))
}

func TestTheTreesBeforeAndAfterEachIterationAreRecorded(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "README", "hello\n", "start")
	b := happy()
	b.byHat["builder"][0].onStart = func() { gittest.WriteFile(t, dir, "built.txt", "built\n") }
	e := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Repo = git.NewWorkspace(dir) })
	_, err := e.Run(t.Context())
	require.NoError(t, err)

	finished := recordsOf[runfiles.IterationFinishedRecord](t, dir, runfiles.TopicIterationFinished)
	require.Len(t, finished, 3)
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	for _, f := range finished {
		require.NotNil(t, f.Trees)
		assert.Empty(t, f.Trees.Unavailable)
		assert.Equal(t, head, f.Trees.HeadBefore)
		assert.Equal(t, head, f.Trees.HeadAfter)
	}
	assert.Equal(t, finished[0].Trees.Before, finished[0].Trees.After, "the coordinator changed nothing")
	build := finished[1].Trees
	assert.Equal(t, finished[0].Trees.After, build.Before, "each iteration starts where the last ended")
	diff, err := git.Repo{Dir: dir}.DiffTrees(t.Context(), build.Before, build.After)
	require.NoError(t, err)
	assert.Contains(t, diff, "+built")
	assert.Empty(t, gittest.Run(t, dir, "diff", "--cached", "--name-only"), "the user's index is untouched")
}

func TestOutsideARepositoryTheTreesSayWhyTheyAreMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Repo = git.NewWorkspace(dir) })
	_, err := e.Run(t.Context())
	require.NoError(t, err)
	for _, f := range recordsOf[runfiles.IterationFinishedRecord](t, dir, runfiles.TopicIterationFinished) {
		require.NotNil(t, f.Trees)
		assert.Equal(t, "the workspace is not in a git repository", f.Trees.Unavailable)
	}
}
