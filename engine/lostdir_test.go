package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// An agent deletes .ralph/ in the middle of its iteration. The run records
// the iteration in a recreated log, ends as fatal saying why, and resumes
// where it was: the builder's task is done, its build.done is the
// reviewer's.
func TestDeletedRalphDirIsRecreatedAndTheRunResumes(t *testing.T) {
	dir := t.TempDir()
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph": {{text: tagged("build.task", "build it")}},
		"builder": {{onStart: func() { require.NoError(t, os.RemoveAll(filepath.Join(dir, runfiles.DirName))) },
			text: tagged("build.done", "tests: pass")}},
		"reviewer": {{text: "Approved. " + tagged("LOOP_COMPLETE", "done")}},
	}}
	rep := &callRecorder{}
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rep }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonFatal, out.Reason)
	assert.Equal(t, exitcode.Fatal, out.ExitCode)
	assert.Contains(t, out.Message, ".ralph/ was deleted while the run was going")
	assert.Equal(t, runfiles.CauseLostDir, out.Cause, "the command line says how to continue")
	assert.NotContains(t, out.Message, "ralph loop", "and names the command")
	assert.Contains(t, rep.all(), "recreating the run's state from memory", "said as it happened")
	assert.Equal(t, []string{"ralph", "builder"}, b.hats, "no iteration after the loss")

	recs := readLog(t, dir)
	var topics []string
	for _, r := range recs {
		require.NoError(t, r.Err)
		topics = append(topics, r.Event.Topic)
	}
	assert.Equal(t, []string{runfiles.TopicLoopStarted, "build.task", "build.done", runfiles.TopicIterationFinished,
		runfiles.TopicEventRouted, runfiles.TopicIterationSettled, runfiles.TopicLoopTerminate}, topics, "the recreated log: the start, the pending event, then on")
	assert.FileExists(t, runfiles.In(dir).State())
	assert.FileExists(t, filepath.Join(dir, runfiles.DirName, ".gitignore"))

	resumed := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Start = runfiles.StartResume })
	out, err = resumed.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, b.hats, "the builder's task was not run again; its build.done was the reviewer's")
}

// A ralph that started in the recreated directory keeps it.
func TestDeletedRalphDirTakenByAnotherRalph(t *testing.T) {
	dir := t.TempDir()
	var other *runfiles.Lock
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph": {{text: tagged("build.task", "build it")}},
		"builder": {{onStart: func() {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, runfiles.DirName)))
			var err error
			other, err = runfiles.AcquireLock(t.Context(), runfiles.In(dir).Lock(), runfiles.LockInfo{PID: os.Getpid(), RunID: "other"}, runfiles.LockOptions{})
			require.NoError(t, err)
		}}},
	}}
	_, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.OrphanLockWait = time.Millisecond }).Run(t.Context())
	t.Cleanup(func() { _ = other.Release() })
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".ralph/ was deleted under the run and could not be recreated")
	var held *runfiles.LockHeldError
	assert.ErrorAs(t, err, &held)
	assert.NoFileExists(t, runfiles.In(dir).State(), "nothing written into the other ralph's directory")
}
