package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/runfiles"
)

// The delivery's end-to-end tests run the real binary against a real bare
// repository as origin, with tk tickets (whose claims and closes ralph
// commits on the base branch) and the scripted agent.

// newPushRepo is an autopilot repository with deliver: push, section's
// further keys, a bare origin that has its main, and three tk tickets.
func newPushRepo(t *testing.T, section string) (w *workspace, remote string, ids []string) {
	t.Helper()
	w = newAutopilotRepo(t, "  source: tk\n  parallel: 2\n  deliver: push\n"+section)
	remote = filepath.Join(t.TempDir(), "origin.git")
	git(t, t.TempDir(), "init", "-q", "--bare", remote)
	git(t, w.dir, "remote", "add", "origin", remote)
	git(t, w.dir, "push", "-q", "origin", "main")
	w.script(taskAgent("0.1"))
	for _, name := range []string{"one", "two", "three"} {
		ids = append(ids, w.run("tk", "create", "Task "+name, "-p", "1"))
	}
	return w, remote, ids
}

// remoteTaskTrailers counts, by task, the commits of the remote's main
// whose Ralph-Task trailer names a task, first parents or not.
func remoteTaskTrailers(t *testing.T, remote string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for line := range strings.Lines(git(t, remote, "log", "--format=%(trailers:key=Ralph-Task,valueonly)", "main")) {
		if task := strings.TrimSpace(line); task != "" {
			n[task]++
		}
	}
	return n
}

// assertDeliveredOnce checks what a push run leaves: every task's merge on
// the remote's main exactly once, the remote where the local main is,
// every ticket closed once.
func assertDeliveredOnce(t *testing.T, w *workspace, remote string, ids []string) {
	t.Helper()
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
		ticket := w.read(".tickets/" + id + ".md")
		assert.Contains(t, ticket, "status: closed")
		assert.Equal(t, 1, strings.Count(ticket, "merged into main by ralph autopilot"), "%s closed once:\n%s", id, ticket)
		assert.Contains(t, ticket, "pushed to origin")
	}
	assert.Equal(t, want, remoteTaskTrailers(t, remote), "every task's merge is on origin's main once")
	assert.Equal(t, git(t, w.dir, "rev-parse", "main"), git(t, remote, "rev-parse", "main"),
		"origin's main is where main is: the tracker's last commits were pushed too")
	w.assertCleanAfterRun(".tickets")
}

// Somebody pushes to origin's main while the autopilot runs, between one
// merge and its push (the verify command of the second merge does it, so
// that it lands exactly there): their commit stays, the merge is made
// again on top of it, and every task reaches origin once.
func TestAutopilotPushKeepsAConcurrentPush(t *testing.T) {
	t.Parallel()
	w, remote, ids := newPushRepo(t, "")
	other := filepath.Join(w.state, "other")
	git(t, w.state, "clone", "-q", remote, other)
	person := filepath.Join(w.state, "person.sh")
	require.NoError(t, os.WriteFile(person, []byte(fmt.Sprintf(`n=$(cat %[1]s/verified 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s/verified
[ "$n" -eq 2 ] || exit 0
cd %[2]s && git pull -q origin main && echo theirs > person.txt && git add person.txt &&
git -c user.name=Person -c user.email=person@example.com commit -qm "a person's work" && git push -q origin HEAD:main
`, w.state, other)), 0o755))
	// verify runs confined as the slots' agents do: the person's push
	// needs origin writable there.
	w.write("ralph.yml", w.read("ralph.yml")+"  verify:\n    - {type: command_succeeds, command: \"sh "+person+"\"}\n"+
		"  sandbox: {write: [\""+remote+"\"]}\n")
	git(t, w.dir, "commit", "-q", "-am", "verify")
	git(t, w.dir, "push", "-q", "origin", "main")

	r := w.ralph("autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "origin/main moved since the merge was made (somebody pushed); merging again on its new tip")
	assert.Contains(t, git(t, remote, "log", "--format=%s", "main"), "a person's work", "their push is not overwritten")
	assert.Equal(t, "theirs\n", w.read("person.txt"), "the checkout has their work")
	assertDeliveredOnce(t, w, remote, ids)
	evs := autopilotEvents(t, w)
	for _, id := range ids {
		assert.Equal(t, 1, countTopic(evs, runfiles.TopicMergePushed)[id], "%s pushed once", id)
	}
}

// The autopilot is killed with SIGKILL at each point of a push's delivery,
// then run again: nothing is lost, nothing reaches origin twice.
func TestAutopilotPushFinishesAfterACrash(t *testing.T) {
	t.Parallel()
	for _, point := range []string{
		autopilot.FaultMerged + ":2",   // verified, not pushed
		autopilot.FaultPushed + ":1",   // pushed, main not moved
		autopilot.FaultAdvanced + ":2", // pushed and main moved, not closed
	} {
		t.Run(point, func(t *testing.T) {
			w, remote, ids := newPushRepo(t, "")
			killed := w.ralphEnv([]string{crashEnv + "=" + point}, "autopilot")
			require.Equal(t, -1, killed.code, "killed at %s\nstderr:\n%s", point, killed.stderr)

			r := w.ralph("autopilot")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assertDeliveredOnce(t, w, remote, ids)
			completed := countTopic(autopilotEvents(t, w), runfiles.TopicTaskCompleted)
			for _, id := range ids {
				assert.Equal(t, 1, completed[id], "%s completed once", id)
			}
		})
	}
}

func TestAutopilotPushNeedsItsRemote(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: tk\n  deliver: push\n  remote: upstream\n")
	w.run("tk", "create", "Task one", "-p", "1")
	r := w.ralph("autopilot")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: autopilot.deliver is push, but upstream is not a remote of this repository\n"+
		"ralph: hint: add it (git remote add upstream URL), or set autopilot.remote to one of `git remote`'s\n")
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph"), "nothing changed")
	r = w.ralph("autopilot", "--dry-run")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: the run would not start:\nralph: error: autopilot.deliver is push, but upstream is not a remote")
}

// The dry run says how the run would deliver, and which tasks it would
// claim at once, and changes nothing.
func TestAutopilotDryRunSaysHowItDelivers(t *testing.T) {
	t.Parallel()
	w, _, ids := newPushRepo(t, "")
	before := snapshot(t, w.dir)
	r := w.ralph("autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	slices.Sort(ids) // tk's order of tasks of one priority
	assert.Contains(t, r.stdout, "claimed in tk at once: "+ids[0]+", "+ids[1]+"; the others as slots free\n")
	assert.Contains(t, r.stdout, "delivery: push: each verified merge is made on origin/main and pushed there with a lease, then main moves to it\n")
	assert.Equal(t, before, snapshot(t, w.dir))

	w.write("ralph.yml", strings.Replace(w.read("ralph.yml"), "  deliver: push\n",
		"  deliver: pr\n  pr: {forge: github, repo: acme/app, close_on: merged, labels: [ralph, bot]}\n", 1))
	r = w.ralph("autopilot", "--dry-run", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"delivery":{"mode":"pr","base":"main","remote":"origin","forge":"github","repo":"acme/app","close_on":"merged","labels":["ralph","bot"]}`)
	r = w.ralph("autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "delivery: pr: each verified merge is pushed to origin as ralph/<task> and a pull request opened on github acme/app onto main; "+
		"the task closes once it is merged (ralph follows it); labels: ralph, bot; main here does not move\n")
}
