package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/runfiles"
)

func logPath(t *testing.T, dir string) string {
	t.Helper()
	path, err := runfiles.CurrentLog(dir)
	require.NoError(t, err)
	return path
}

// A run resumed with an edited configuration has the hats it was resumed
// with, and its log says so.
func TestRunHatsFollowsTheConfigurationOfTheLastResume(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	interrupted := &fakeBackend{byHat: map[string][]turn{"ralph": {{block: true, onStart: cancel}}}}
	_, err := newTestEngine(t, dir, interrupted, settings()).Run(ctx)
	require.NoError(t, err)

	ids, ok, err := runfiles.RunHats(logPath(t, dir))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{"builder", "reviewer"}, ids)

	more, err := hats.NewRegistry(append(twoHats(t).Hats(), hats.Hat{ID: "deployer", Triggers: []string{"review.approved"}}),
		hats.WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	_, err = newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Start, o.Hats = runfiles.StartResume, more }).Run(t.Context())
	require.NoError(t, err)

	ids, ok, err = runfiles.RunHats(logPath(t, dir))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{"builder", "reviewer", "deployer"}, ids)
}

func TestRunHatsWithoutARun(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"an agent's lines only": `{"topic":"build.done","source":"agent"}` + "\n",
		"an agent pretending": `{"topic":"loop.started","source":"agent","payload":{"hats":["x"]}}` + "\n" +
			`{"topic":"note","source":"agent","payload":{"topic":"loop.started","hats":["y"]}}` + "\n",
		"loop.started not yet whole":  `{"topic":"loop.started","source":"ralph","payload":{"hats":["x"]}}`,
		"a resume that lists no hats": `{"topic":"loop.resumed","source":"ralph","payload":{"iteration":3}}` + "\n",
		"empty":                       "",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			ids, ok, err := runfiles.RunHats(path)
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Empty(t, ids)
		})
	}
	ids, ok, err := runfiles.RunHats(filepath.Join(dir, "missing.jsonl"))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, ids)
}

// A run without configured hats records an empty list: every target but
// the coordinator's is unknown, which is different from not knowing.
func TestRunHatsOfARunWithoutHats(t *testing.T) {
	dir := t.TempDir()
	none, err := hats.NewRegistry(nil)
	require.NoError(t, err)
	b := &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}}}
	_, err = newTestEngine(t, dir, b, settings(), func(o *Options) { o.Hats = none }).Run(t.Context())
	require.NoError(t, err)
	ids, ok, err := runfiles.RunHats(logPath(t, dir))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Empty(t, ids)
}

// A loop.started line longer than the read buffer (a long objective) is
// read whole.
func TestRunHatsReadsALongLine(t *testing.T) {
	started := runfiles.RalphEvent(runfiles.TopicLoopStarted, runfiles.LoopStartedRecord{RunID: "r",
		Objective: strings.Repeat("objective ", 20_000), Hats: []string{"builder"}})
	line, err := events.EncodeLine(started)
	require.NoError(t, err)
	require.Greater(t, len(line), 128<<10)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, append(line, `{"topic":"a","source":"agent"}`+"\n"...), 0o644))

	ids, ok, err := runfiles.RunHats(path)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []string{"builder"}, ids)
}
