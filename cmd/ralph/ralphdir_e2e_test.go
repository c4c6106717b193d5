package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Everything under .ralph/ is ralph's own and never committed, yet a
// repository can commit links there (`git add -f`), and every clone and
// worktree checks them out. These tests put a link in place of each of
// ralph's files and directories, pointing at a file or directory outside
// the repository with known contents, and check that ralph refuses it,
// says where and why, and leaves what it points to as it was.

// linkConfig is a one-hat run that ends after one confirmed claim.
const linkConfig = `event_loop:
  prompt: Say that you are done.
  max_iterations: 4
  completion_confirmations: 1
  kill_grace_seconds: 1
`

func doneScript() agentScript {
	return agentScript{Steps: []step{say(tag("LOOP_COMPLETE", "done"))}}
}

// slowThenDoneScript: the first iteration's agent runs for two minutes
// (ralph is killed meanwhile), the next ones claim completion.
func slowThenDoneScript() agentScript {
	return agentScript{Steps: []step{{SleepMS: 120_000}, say(tag("LOOP_COMPLETE", "done"))}}
}

// outside is a file and a directory beyond the repository, with known
// contents, that links under .ralph/ point to.
type outside struct {
	file, dir string
}

const outsideText = "the user's own file, which no ralph writes\n"

func newOutside(t *testing.T) outside {
	t.Helper()
	base := t.TempDir()
	o := outside{file: filepath.Join(base, "precious.txt"), dir: filepath.Join(base, "elsewhere")}
	require.NoError(t, os.WriteFile(o.file, []byte(outsideText), 0o644))
	require.NoError(t, os.Mkdir(o.dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(o.dir, "kept.txt"), []byte(outsideText), 0o644))
	return o
}

// target is what a link named name points to: the directory for ralph's
// directories, the file for its files.
func (o outside) target(name string) string {
	switch filepath.Base(name) {
	case ".ralph", "runs", "agent", "autopilot", "autopilot-control", ".worktrees":
		return o.dir
	}
	return o.file
}

// untouched checks that the file and the directory are as newOutside
// made them.
func (o outside) untouched(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(o.file)
	require.NoError(t, err)
	assert.Equal(t, outsideText, string(data), "the file a link pointed to is unchanged")
	assert.Equal(t, []string{"kept.txt"}, dirNames(t, o.dir), "nothing was made in the directory a link pointed to")
	data, err = os.ReadFile(filepath.Join(o.dir, "kept.txt"))
	require.NoError(t, err)
	assert.Equal(t, outsideText, string(data))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// cloneWith commits files (a name and its contents) and links (a name and
// where it points) into a new repository, with ralph.yml, and returns a
// fresh clone of it: what a user who clones such a repository gets.
func cloneWith(t *testing.T, config string, files, links map[string]string) *workspace {
	t.Helper()
	origin := newWorkspace(t)
	origin.write("ralph.yml", config+agentCLI())
	for name, content := range files {
		origin.write(name, content)
	}
	for name, to := range links {
		path := filepath.Join(origin.dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.Symlink(to, path))
	}
	git(t, origin.dir, "add", "-f", "-A")
	git(t, origin.dir, "commit", "-q", "-m", "a repository that brings .ralph/ with it")
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, origin.dir, "clone", "-q", origin.dir, clone)
	for name := range links {
		fi, err := os.Lstat(filepath.Join(clone, name))
		require.NoError(t, err, "the clone has %s", name)
		require.NotZero(t, fi.Mode()&fs.ModeSymlink, "the clone checked %s out as a link", name)
	}
	return &workspace{t: t, dir: clone, state: t.TempDir()}
}

// assertRefused checks that ralph named the link and ended as fatal.
func assertRefused(t *testing.T, r result, link string) {
	t.Helper()
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, link+" is a symbolic link", "ralph names the link")
	assert.Contains(t, r.stderr, "ralph: hint: remove the link", "and says how to fix it")
}

func skipWithoutLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
}

func TestE2ELoopRefusesLinksUnderRalphDir(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	for _, name := range []string{".ralph", ".ralph/loop.lock", ".ralph/agent.pgid", ".ralph/state.json",
		".ralph/.state.json.spare", ".ralph/current-events", ".ralph/.gitignore", ".ralph/runs"} {
		t.Run(name, func(t *testing.T) {
			o := newOutside(t)
			w := cloneWith(t, linkConfig, nil, map[string]string{name: o.target(name)})
			w.script(doneScript())

			r := w.ralph("loop")

			assertRefused(t, r, filepath.Join(w.dir, name))
			o.untouched(t)
		})
	}
}

// A .ralph of another user's is refused: its owner could put links in it
// after any check, or read what ralph writes there.
func TestE2ELoopRefusesARalphDirOfAnotherUser(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	w := newWorkspace(t)
	w.write("ralph.yml", linkConfig+agentCLI())
	w.script(doneScript())
	dir := filepath.Join(w.dir, ".ralph")
	require.NoError(t, os.Mkdir(dir, 0o777))
	require.NoError(t, os.Chown(dir, 4242, 4242))

	r := w.ralph("loop")

	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, dir+" belongs to uid 4242, not to uid 0 that ralph runs as")
	assert.Contains(t, r.stderr, "ralph: hint: run ralph as the directory's owner, or remove it (`rm -r "+dir+"`)")
	assert.Empty(t, dirNames(t, dir), "nothing was written in it")
}

// Where ralph can go on without the file, it says why it does without,
// and still leaves the link's target alone.
func TestE2ELoopGoesOnWithoutLinkedFilesItCanDoWithout(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	cases := []struct {
		name string
		says string // "" when ralph does without a word
	}{
		// The scratchpad, under agent/, goes into every prompt: the file
		// the link points to is not sent to the model.
		{".ralph/agent", "the scratchpad is left out of the prompt: "},
		// A stop request from before the run is stale: the link is removed.
		{".ralph/stop", ""},
		// Without its barrier, the workspace watch says "changed" and ralph
		// looks every time.
		{".ralph/watch.barrier", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOutside(t)
			w := cloneWith(t, linkConfig, nil, map[string]string{tc.name: o.target(tc.name)})
			w.script(doneScript())

			r := w.ralph("loop")

			require.Equal(t, 0, r.code, r.stderr)
			if tc.says != "" {
				assert.Contains(t, r.stderr, tc.says+filepath.Join(w.dir, tc.name)+" is a symbolic link")
			}
			o.untouched(t)
			assert.NotContains(t, w.prompt(1), "the user's own file", "the link's target never reaches a prompt")
		})
	}
}

// unfinishedRun leaves a run in w that a killed ralph cut off while its
// first agent ran, with that agent gone, as `ralph loop --resume` finds
// it.
func unfinishedRun(t *testing.T, w *workspace) {
	t.Helper()
	w.write("ralph.yml", linkConfig+agentCLI())
	w.script(doneScript())
	killed := w.ralphKilledAt("agent.started:1", false)
	require.True(t, killed.killed, killed.stderr)
	killGroup(t, w)
}

func TestE2EResumeRefusesLinksUnderRalphDir(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	for _, name := range []string{".ralph", ".ralph/loop.lock", ".ralph/agent.pgid", ".ralph/state.json",
		".ralph/.state.json.spare", ".ralph/current-events", "the event log", ".ralph/runs"} {
		t.Run(name, func(t *testing.T) {
			o := newOutside(t)
			w := newWorkspace(t)
			unfinishedRun(t, w)
			if name == "the event log" {
				name = strings.TrimSpace(w.read(".ralph/current-events"))
			}
			path := filepath.Join(w.dir, name)
			if name == ".ralph" {
				// The run's own files, moved to where the link points: a
				// resume through the link would write there.
				require.NoError(t, os.Remove(o.dir+"/kept.txt"))
				require.NoError(t, os.Remove(o.dir))
				require.NoError(t, os.Rename(path, o.dir))
			} else {
				require.NoError(t, os.RemoveAll(path))
			}
			require.NoError(t, os.Symlink(o.target(name), path))
			before := treeSnapshot(t, o.dir)

			r := w.ralph("loop", "--resume")

			assertRefused(t, r, path)
			assert.Equal(t, before, treeSnapshot(t, o.dir), "nothing changed where the link points")
			data, err := os.ReadFile(o.file)
			require.NoError(t, err)
			assert.Equal(t, outsideText, string(data))
		})
	}
}

// treeSnapshot is every file under dir with its contents.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[strings.TrimPrefix(path, dir)] = string(data)
		return err
	}))
	return out
}

func TestE2EAutopilotRefusesLinksUnderRalphDir(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	for _, name := range []string{".ralph", ".ralph/autopilot.lock", ".ralph/autopilot-events.jsonl",
		".ralph/autopilot-state.json", ".ralph/autopilot-control", ".ralph/autopilot", ".worktrees"} {
		t.Run(name, func(t *testing.T) {
			o := newOutside(t)
			w := autopilotCloneWith(t, name, o.target(name))

			r := w.ralph("autopilot")

			assertRefused(t, r, filepath.Join(w.dir, name))
			o.untouched(t)
		})
	}
}

// A progress.md that is a link is replaced by the next one, as every file
// ralph rewrites whole is: the link goes, its target stays as it was.
func TestE2EAutopilotReplacesALinkedProgressFile(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	o := newOutside(t)
	w := autopilotCloneWith(t, ".ralph/progress.md", o.file)

	r := w.ralph("autopilot")

	require.Equal(t, 0, r.code, r.stderr)
	o.untouched(t)
	fi, err := os.Lstat(filepath.Join(w.dir, ".ralph", "progress.md"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
}

// autopilotCloneWith is a clone of a repository with one ready tk ticket
// and a link committed as name.
func autopilotCloneWith(t *testing.T, name, to string) *workspace {
	t.Helper()
	origin := newAutopilotRepo(t, "  source: tk\n")
	origin.run("tk", "create", "Task one", "-d", "Do one")
	path := filepath.Join(origin.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Symlink(to, path))
	git(t, origin.dir, "add", "-f", "-A")
	git(t, origin.dir, "commit", "-q", "-m", "a ticket, and a link where ralph keeps its files")
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, origin.dir, "clone", "-q", origin.dir, clone)
	git(t, clone, "config", "user.name", "Dev")
	git(t, clone, "config", "user.email", "dev@example.com")
	w := &workspace{t: t, dir: clone, state: t.TempDir()}
	w.script(taskAgent("0"))
	return w
}

func TestE2ECommandsRefuseLinksUnderRalphDir(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	const log = ".ralph/events-20260101-000000.jsonl"
	t.Run("emit to the log current-events names", func(t *testing.T) {
		o := newOutside(t)
		w := cloneWith(t, linkConfig, map[string]string{".ralph/current-events": log + "\n"}, map[string]string{log: o.file})
		r := w.ralph("emit", "build.done", "appended")
		assertRefused(t, r, filepath.Join(w.dir, log))
		o.untouched(t)
	})
	t.Run("emit to a log outside .ralph", func(t *testing.T) {
		o := newOutside(t)
		w := cloneWith(t, linkConfig, map[string]string{".ralph/current-events": o.file + "\n"}, nil)
		r := w.ralph("emit", "build.done", "appended")
		assert.Equal(t, 3, r.code, r.stderr)
		assert.Contains(t, r.stderr, `names the event log "`+o.file+`", which is not a file in .ralph/`)
		assert.Contains(t, r.stderr, "ralph: hint: remove "+filepath.Join(w.dir, ".ralph", "current-events"))
		o.untouched(t)
	})
	t.Run("serve's token", func(t *testing.T) {
		o := newOutside(t)
		w := cloneWith(t, linkConfig, nil, map[string]string{".ralph/serve.token": o.file})
		r := w.ralph("serve", "--addr", "127.0.0.1:0")
		assertRefused(t, r, filepath.Join(w.dir, ".ralph", "serve.token"))
		assert.NotContains(t, r.stdout+r.stderr, "no ralph writes", "the linked file is not taken for the token, nor printed")
		o.untouched(t)
	})
	t.Run("memory add", func(t *testing.T) {
		o := newOutside(t)
		w := cloneWith(t, linkConfig, nil, map[string]string{".ralph/agent": o.dir})
		r := w.ralph("memory", "add", "remember this")
		assertRefused(t, r, filepath.Join(w.dir, ".ralph", "agent"))
		o.untouched(t)
	})
	for _, name := range []string{".ralph/agent/memories.md", ".ralph/agent/memories.md.lock"} {
		t.Run("memory add with "+name, func(t *testing.T) {
			o := newOutside(t)
			w := cloneWith(t, linkConfig, nil, map[string]string{name: o.file})
			r := w.ralph("memory", "add", "remember this")
			assertRefused(t, r, filepath.Join(w.dir, name))
			o.untouched(t)
		})
	}
	t.Run("stop", func(t *testing.T) {
		o := newOutside(t)
		w := newWorkspace(t)
		w.write("ralph.yml", linkConfig+agentCLI())
		w.script(slowThenDoneScript())
		loop, stderr := w.startRalph("loop")
		pgidFile := filepath.Join(w.dir, ".ralph", "agent.pgid")
		waitFor(t, "the agent to start", func() bool { return w.pidFile(pgidFile) > 0 })
		stop := filepath.Join(w.dir, ".ralph", "stop")
		require.NoError(t, os.Symlink(o.file, stop))

		r := w.ralph("stop", "--now")

		assertRefused(t, r, stop)
		o.untouched(t)
		require.NoError(t, os.Remove(stop))
		require.Equal(t, 0, w.ralph("stop", "--now").code, "without the link, the request goes through")
		assert.Equal(t, 1, exitCodeOf(loop.Wait()), stderr.String())
	})
}

// What ralph writes under .ralph/ holds what agents printed and published:
// only the user may read it.
func TestE2ERalphFilesArePrivate(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", linkConfig+agentCLI())
	w.script(agentScript{Steps: []step{{Sh: "ralph memory add 'a note' >/dev/null", Say: tag("LOOP_COMPLETE", "done")}}})
	require.Equal(t, 0, w.ralph("loop").code)
	require.Equal(t, 0, w.ralph("loop").code, "a second run archives the first")
	assertPrivate(t, filepath.Join(w.dir, ".ralph"))

	a := newAutopilotRepo(t, "  source: tk\n")
	a.run("tk", "create", "Task one", "-d", "Do one")
	a.script(taskAgent("0"))
	r := a.ralph("autopilot")
	require.Equal(t, 0, r.code, r.stderr)
	assertPrivate(t, filepath.Join(a.dir, ".ralph"))
}

func assertPrivate(t *testing.T, dir string) {
	t.Helper()
	seen := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		assert.Equal(t, want, fi.Mode().Perm(), "%s", path)
		seen++
		return nil
	}))
	assert.Greater(t, seen, 5, "ralph wrote its files")
}

// Each task of the autopilot runs its loop in a worktree of the
// repository, which checks out the links the repository brings under
// .ralph/ as a clone does: the task's loop refuses them, the task fails
// saying why, and what they point to is left as it was.
func TestE2EAutopilotTaskLoopRefusesLinksUnderRalphDir(t *testing.T) {
	t.Parallel()
	skipWithoutLinks(t)
	for _, name := range []string{".ralph/loop.lock", ".ralph/agent.pgid", ".ralph/.state.json.spare", ".ralph/current-events", ".ralph/runs"} {
		t.Run(name, func(t *testing.T) {
			o := newOutside(t)
			w := autopilotCloneWith(t, name, o.target(name))

			r := w.ralph("autopilot")

			o.untouched(t)
			assert.Equal(t, 1, r.code, r.stderr)
			assert.Contains(t, r.stderr, "0 completed, 1 failed")
			links, err := filepath.Glob(filepath.Join(w.dir, ".worktrees", "*", name))
			require.NoError(t, err)
			require.Len(t, links, 1, "the failed task's worktree is kept, with the link")
			assert.Contains(t, r.stderr, "its loop exited 3: ralph: hint: remove the link (`rm "+links[0]+"`)",
				"the task's failure says what to remove")
		})
	}
}
