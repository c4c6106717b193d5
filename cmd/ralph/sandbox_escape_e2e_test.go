package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/sandbox"
	"github.com/ralph-loop/ralph/runfiles"
)

// The ways an agent, or a prompt injection, could run code outside its
// sandbox through ralph itself, each tried for real: a test the checks run
// that writes outside the workspace and reads a key; a worktree's .git
// file or commondir pointed at a repository whose config runs a script;
// .git/config or .git/commondir of a main checkout armed the same way.

// The checks an agent writes: one writes outside the workspace, one reads
// a key, as a test suite under the agent's control would.
const (
	escapeCheck = `echo x > "$HOME/escaped"`
	peekCheck   = `cat "$HOME/.ssh/id_probe"`
)

// probeHome is a home directory with a key in ~/.ssh.
func probeHome(t *testing.T) string {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_probe"), []byte("SECRET-PROBE-KEY\n"), 0o600))
	return home
}

// fsmonitorTrap is a script that git runs as core.fsmonitor, and the
// marker file it makes: in a directory no sandbox grants, so that the
// marker appears only when something unconfined (ralph's own git) ran it.
func fsmonitorTrap(t *testing.T) (script, marker string) {
	marker = filepath.Join(t.TempDir(), "fsmonitor-ran")
	script = filepath.Join(t.TempDir(), "fsmonitor.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755))
	return script, marker
}

// payloadsOf joins the payloads of a log's lines, for a search.
func payloadsOf(evs []events.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Topic + ": " + ev.PayloadText() + "\n")
	}
	return b.String()
}

func recordsEvents(t *testing.T, recs []events.Record) []events.Event {
	var out []events.Event
	for _, r := range recs {
		require.NoError(t, r.Err)
		out = append(out, r.Event)
	}
	return out
}

// withOff runs run for each sandbox this machine has and for none.
func withOff(t *testing.T, run func(t *testing.T, mode string)) {
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) { run(t, string(mode)) })
	t.Run("off", func(t *testing.T) { run(t, "off") })
}

func TestE2ECriteriaRunConfinedAsTheAgent(t *testing.T) {
	t.Parallel()
	withOff(t, func(t *testing.T, mode string) {
		w := newWorkspace(t)
		home := probeHome(t)
		w.write("ralph.yml", agentCLI()+`event_loop:
  prompt: Write the tests.
  max_iterations: 1
  completion_confirmations: 1
sandbox:
  mode: `+mode+`
acceptance_criteria:
  - {type: command_succeeds, name: escape, command: "sh escape.sh"}
  - {type: tests_pass, name: peek, command: "sh peek.sh"}
`)
		w.script(agentScript{Steps: []step{{Write: map[string]string{"escape.sh": escapeCheck, "peek.sh": peekCheck},
			Say: tag("LOOP_COMPLETE", "the tests are written")}}})
		r := w.ralphEnv([]string{"HOME=" + home}, "loop")
		log := payloadsOf(recordsEvents(t, w.events()))

		if mode == "off" {
			require.Equal(t, 0, r.code, "unconfined, the checks do what they like, as before; stderr:\n%s", r.stderr)
			assert.FileExists(t, filepath.Join(home, "escaped"))
			return
		}
		require.Equal(t, 2, r.code, "the claim is rejected and the one iteration allowed is spent; stderr:\n%s", r.stderr)
		assert.NoFileExists(t, filepath.Join(home, "escaped"), "a check wrote outside the workspace")
		assert.Contains(t, log, runfiles.TopicCompletionRejected+": completion rejected: escape, peek failed")
		assert.Contains(t, log, "the sandbox ("+mode+") refused a write to "+filepath.Join(home, "escaped"),
			"the evidence says the sandbox refused it")
		if mode == string(sandbox.ModeLandlock) {
			// bwrap hides ~/.ssh behind an empty directory: "No such file".
			assert.Contains(t, log, "the sandbox (landlock) refused to read "+filepath.Join(home, ".ssh", "id_probe"))
		}
		assert.NotContains(t, log, "SECRET-PROBE-KEY", "a check read the key")
	})
}

func TestE2EAutopilotVerifyRunsInTheSlotsSandbox(t *testing.T) {
	t.Parallel()
	withOff(t, func(t *testing.T, mode string) {
		w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  sandbox:\n    mode: "+mode+"\n  verify:\n"+
			"    - {type: command_succeeds, name: escape, command: \"sh escape.sh\"}\n"+
			"    - {type: command_succeeds, name: peek, command: \"sh peek.sh\"}\n")
		w.write("TODO.md", "- [ ] Write the tests\n")
		git(t, w.dir, "add", "-A")
		git(t, w.dir, "commit", "-q", "-m", "tasks")
		home := probeHome(t)
		w.script(agentScript{Steps: []step{{Write: map[string]string{"escape.sh": escapeCheck, "peek.sh": peekCheck},
			Commit: "the tests", Say: tag("LOOP_COMPLETE", "done")}}})
		r := w.ralphEnv([]string{"HOME=" + home}, "autopilot")
		log := payloadsOf(autopilotEvents(t, w))

		if mode == "off" {
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.FileExists(t, filepath.Join(home, "escaped"), "unconfined, verify does what it likes, as before")
			return
		}
		require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.NoFileExists(t, filepath.Join(home, "escaped"), "verify wrote outside the merge's worktree")
		assert.Contains(t, log, "verification of the merged result failed: escape: $ sh escape.sh")
		assert.Contains(t, log, "the sandbox ("+mode+") refused a write to "+filepath.Join(home, "escaped"))
		assert.NotContains(t, log, "SECRET-PROBE-KEY", "verify read the key")
		assert.Empty(t, w.mergedOrder(), "nothing unverified is merged")
	})
}

// A slot's agent points its worktree at a repository of its own whose
// config has git run a script: the worktree's .git file, or its git
// directory's commondir (which the sandbox lets it write). ralph's git in
// the slot is pinned to the directories the autopilot made: a new .git
// file changes nothing for it, and the run goes on; a new commondir, which
// git's refs would still follow, stops the loop, and the task fails.
// Either way the script never runs.
func TestE2EAutopilotSlotAgentCannotRedirectRalphsGit(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		for _, tamper := range []string{".git", "commondir"} {
			t.Run(tamper, func(t *testing.T) {
				w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  sandbox:\n    mode: "+string(mode)+"\n")
				w.write("TODO.md", "- [ ] Redirect\n")
				git(t, w.dir, "add", "-A")
				git(t, w.dir, "commit", "-q", "-m", "tasks")
				trap, marker := fsmonitorTrap(t)
				redirect := `echo "gitdir: $PWD/armed/.git" > .git`
				if tamper == "commondir" {
					redirect = `echo "$PWD/armed/.git" > "$(git rev-parse --absolute-git-dir)/commondir"`
				}
				w.script(agentScript{Steps: []step{{
					Sh: `echo done > redirect.txt && git add redirect.txt && git commit -qm "do the task" && ` +
						`git init -q armed && git -C armed config core.fsmonitor "$TRAP" && ` + redirect,
					Say: tag("LOOP_COMPLETE", "done"),
				}}})
				r := w.ralphEnv([]string{"TRAP=" + trap}, "autopilot")
				assert.NoFileExists(t, marker, "ralph's git ran the script the slot's agent armed")
				if tamper == ".git" {
					require.Equal(t, 0, r.code, "the run goes on; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
					assert.Equal(t, []string{"redirect"}, w.mergedOrder())
					return
				}
				require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				log := payloadsOf(autopilotEvents(t, w))
				assert.Contains(t, log, `"reason":"its loop exited 3 (fatal): the agent of hat ralph changed `)
				assert.Contains(t, log, "commondir, which decides what git runs in this repository: ralph runs no git on a repository an agent may have armed")
				assert.Empty(t, w.mergedOrder())
			})
		}
	})
}

// In a main checkout the agent writes .git with the rest of the workspace
// (Landlock), or adds .git/commondir beside the config and hooks that
// bubblewrap keeps read-only. ralph stops the run before it runs git there.
func TestE2EAConfinedAgentThatArmsItsCheckoutStopsTheRun(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		for _, how := range []string{"config", "commondir"} {
			t.Run(how, func(t *testing.T) {
				w := newWorkspace(t)
				w.write("README.md", "a project\n")
				git(t, w.dir, "add", "-A")
				git(t, w.dir, "commit", "-q", "-m", "start")
				trap, marker := fsmonitorTrap(t)
				w.write("ralph.yml", agentCLI()+"event_loop:\n  prompt: Do it.\n  max_iterations: 2\n  completion_confirmations: 1\nsandbox:\n  mode: "+string(mode)+"\n")
				arm := `git config core.fsmonitor "$TRAP" || true`
				if how == "commondir" {
					arm = `git init -q armed && git -C armed config core.fsmonitor "$TRAP" && echo "$PWD/armed/.git" > .git/commondir`
				}
				w.script(agentScript{Steps: []step{{Sh: arm, Say: tag("LOOP_COMPLETE", "done")}}})
				r := w.ralphEnv([]string{"TRAP=" + trap}, "loop")
				assert.NoFileExists(t, marker, "ralph's git ran the script the agent armed the checkout with")
				if how == "config" && mode == sandbox.ModeBwrap {
					require.Equal(t, 0, r.code, "bubblewrap kept .git/config read-only; stderr:\n%s", r.stderr)
					return
				}
				require.Equal(t, 3, r.code, "stderr:\n%s", r.stderr)
				changed := filepath.Join(".git", how)
				assert.Contains(t, r.stderr, "ralph: error: the agent of hat ralph changed "+changed+
					", which decides what git runs in this repository: ralph runs no git on a repository an agent may have armed, and stopped the run")
				assert.Contains(t, r.stderr, "ralph: hint: read what changed with a text viewer, not git")
				assert.Contains(t, r.stderr, "then continue with `ralph loop --resume`")
				status := runRalph(t, "-C", w.dir, "status")
				assert.Contains(t, status.stdout, "fatal")
			})
		}
	})
}

// A loop in a worktree of its own (--worktree) is in a worktree ralph
// made too: its agent's rewritten .git file is nothing to the loop's git,
// nor to `ralph worktrees`, which counts what the loop left uncommitted.
func TestE2ELoopWorktreeAgentCannotRedirectRalphsGit(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
		w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 2\n  completion_confirmations: 1\nsandbox:\n  mode: "+string(mode)+"\n")
		git(t, w.dir, "commit", "-qam", "confined")
		trap, marker := fsmonitorTrap(t)
		w.script(agentScript{Steps: []step{{
			Sh: `echo done > side.txt && git add side.txt && git commit -qm "do the work" && echo left > uncommitted.txt && ` +
				`git init -q armed && git -C armed config core.fsmonitor "$TRAP" && echo "gitdir: $PWD/armed/.git" > .git`,
			Say: tag("LOOP_COMPLETE", "done"),
		}}})
		r := w.ralphEnv([]string{"TRAP=" + trap}, "loop", "--worktree", "side", "-p", "work beside it")
		require.Equal(t, 0, r.code, "the run goes on; stderr:\n%s", r.stderr)
		assert.Contains(t, w.filesOn("ralph-loop/side"), "side.txt")
		r = w.ralphEnv([]string{"TRAP=" + trap}, "worktrees")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `(?m)^loop +side +completed \(exit 0\) +ralph-loop/side +1 commit not in main, 2 uncommitted `, r.stdout, "the loop's own repository, read pinned")
		assert.NoFileExists(t, marker, "ralph's git ran the script the loop's agent armed")
	})
}
