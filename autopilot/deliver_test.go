package autopilot

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// withRemote gives the harness's repository a bare remote, origin, with
// its base branch pushed there, and returns the remote's path and the
// base branch.
func withRemote(t *testing.T, h *harness) (remote, base string) {
	t.Helper()
	remote = filepath.Join(t.TempDir(), "origin.git")
	gittest.Run(t, t.TempDir(), "init", "-q", "--bare", remote)
	gittest.Run(t, h.repo, "remote", "add", "origin", remote)
	base = gittest.Run(t, h.repo, "branch", "--show-current")
	gittest.Run(t, h.repo, "push", "-q", "origin", base)
	return remote, base
}

func (h *harness) pushSettings(parallel int) config.Autopilot {
	s := h.settings(parallel)
	s.Deliver, s.Remote = "push", "origin"
	return s
}

// remoteTrailers counts, by task, the commits on the remote's branch that
// name a task in their Ralph-Task trailer, first parents or not.
func remoteTrailers(t *testing.T, remote, branch string) map[string]int {
	t.Helper()
	n := map[string]int{}
	out := gittest.Run(t, remote, "log", "--format=%(trailers:key="+git.TaskTrailer+",valueonly)", branch)
	for line := range strings.Lines(out) {
		if task := strings.TrimSpace(line); task != "" {
			n[task]++
		}
	}
	return n
}

func TestPushDeliversEachVerifiedMergeToTheRemoteOnce(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	remote, base := withRemote(t, h)
	h.start(t.Context(), h.pushSettings(1))
	for range 2 {
		h.loop().complete()
		pushed := payloadOf(h.next(runfiles.TopicMergePushed))
		assert.Equal(t, "origin", pushed.Remote)
		done := payloadOf(h.next(runfiles.TopicTaskCompleted))
		assert.Equal(t, pushed.Commit, done.Commit)
		assert.Equal(t, done.Commit, gittest.Run(t, remote, "rev-parse", base), "the remote has the merge before the task completes")
	}
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 2}, res)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, remoteTrailers(t, remote, base))
	assert.Equal(t, gittest.Run(t, h.repo, "rev-parse", base), gittest.Run(t, remote, "rev-parse", base),
		"the tracker's last commits are pushed when the run ends")
	assert.Contains(t, gittest.Run(t, remote, "log", "--format=%s", base), "ralph: close b")
	assert.Contains(t, h.source.reason["a"], "pushed to origin")
}

// A push somebody makes between the merge and ralph's push is not
// overwritten: the lease refuses ralph's push, and the merge is made
// again on top of theirs (with the tracker's commits of the local branch
// merged in), verified again and pushed.
func TestPushMadeMeanwhileIsKeptAndTheMergeMadeAgain(t *testing.T) {
	h := newHarness(t, task("a", 1))
	remote, base := withRemote(t, h)
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, t.TempDir(), "clone", "-q", remote, other)
	s := h.pushSettings(1)
	flag := filepath.Join(t.TempDir(), "pushed")
	// The verification of the first merge is where somebody pushes.
	s.Verify = verifySpecs(t, fmt.Sprintf(`[ -e %[1]s ] || { touch %[1]s && cd %[2]s && echo theirs > person.txt && git add person.txt && `+
		`git -c user.name=P -c user.email=p@example.com commit -qm "a person's work" && git push -q origin HEAD:%[3]s; }`, flag, other, base))
	h.start(t.Context(), s)
	h.loop().complete()
	refused := payloadOf(h.next(runfiles.TopicMergeFailed))
	assert.True(t, refused.Requeued)
	assert.Contains(t, refused.Reason, "origin/"+base+" moved since the merge was made (somebody pushed); merging again on its new tip")
	h.next(runfiles.TopicMergePushed)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 1}, res)

	log := gittest.Run(t, remote, "log", "--format=%s", base)
	assert.Contains(t, log, "a person's work", "their push is kept")
	assert.Contains(t, log, "ralph: bring "+base+"'s own commits onto origin/"+base, "the tracker's commits are merged onto theirs")
	assert.Equal(t, map[string]int{"a": 1}, remoteTrailers(t, remote, base))
	assert.Equal(t, gittest.Run(t, h.repo, "rev-parse", base), gittest.Run(t, remote, "rev-parse", base))
	assert.FileExists(t, filepath.Join(h.repo, "person.txt"), "the checkout has their work too")
	assert.FileExists(t, filepath.Join(h.repo, "a.txt"))
	merged, err := git.Repo{Dir: h.repo}.MergedTasks(t.Context(), "", base)
	require.NoError(t, err)
	assert.Contains(t, merged, "a", "the task's merge stays on the first-parent line")
}

// A remote whose base branch and the local one both moved, with
// conflicting changes outside the tracker's files, stops the delivery:
// nothing is merged, the run ends resumable, and the hint says how to
// bring them together.
func TestPushStopsWhenTheBranchesConflict(t *testing.T) {
	h := newHarness(t, task("a", 1))
	remote, base := withRemote(t, h)
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, t.TempDir(), "clone", "-q", remote, other)
	gittest.Run(t, other, "config", "user.name", "P")
	gittest.Run(t, other, "config", "user.email", "p@example.com")
	gittest.CommitFile(t, other, "README.md", "theirs\n", "their readme")
	gittest.Run(t, other, "push", "-q", "origin", "HEAD:"+base)
	gittest.CommitFile(t, h.repo, "README.md", "ours\n", "our readme")
	h.start(t.Context(), h.pushSettings(1))
	h.loop().complete()
	failed := payloadOf(h.next(runfiles.TopicMergeFailed))
	assert.True(t, failed.Requeued, "the merge waits for the next run")
	res := h.wait()
	var de *DeliveryError
	require.ErrorAs(t, h.err, &de)
	assert.Contains(t, de.Error(), base+" and origin/"+base+" have both moved, and their changes conflict in README.md")
	assert.Contains(t, de.Hint(), "git pull --no-rebase origin "+base)
	assert.True(t, res.Resumable)
	assert.Empty(t, remoteTrailers(t, remote, base))
	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	require.Len(t, st.MergeQueue, 1)
	assert.Equal(t, runfiles.MergeQueued, st.MergeQueue[0].Step)
	assert.Equal(t, 0, h.source.closed["a"])
}
