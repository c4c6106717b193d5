package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// confinedBackend is a fakeBackend that says its agent runs in a sandbox.
type confinedBackend struct {
	*fakeBackend
	sandbox string
}

func (b confinedBackend) Sandbox() string { return b.sandbox }

// passSandbox is a criteria.Sandbox that confines nothing: what the engine
// asks of one, without a kernel's say (the end-to-end tests have that).
type passSandbox string

func (passSandbox) Confine(*exec.Cmd) (func(), error) { return func() {}, nil }
func (passSandbox) Denied(string) string              { return "" }

// armingRepo is a repository and the fsmonitor script that writes marker:
// ralph's git running it is what the guard is there to prevent.
func armingRepo(t *testing.T) (dir, script, marker string) {
	t.Helper()
	dir = gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "README.md", "hi\n", "start")
	marker = filepath.Join(t.TempDir(), "ran")
	script = filepath.Join(t.TempDir(), "fsmonitor.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	return dir, script, marker
}

// arm is what the agent does: core.fsmonitor into .git/config, written as
// a file (the agent's own git would do the same).
func arm(t *testing.T, dir, script string) func() {
	return func() {
		f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("[core]\n\tfsmonitor = " + script + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
}

func TestAConfinedAgentThatArmsTheRepositoryStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		sandbox string
		stops   bool
	}{{"landlock", true}, {"bwrap, network deny", true}, {"off", false}, {"", false}} {
		t.Run("sandbox "+tc.sandbox, func(t *testing.T) {
			dir, script, marker := armingRepo(t)
			b := happy()
			b.byHat["builder"][0].onStart = arm(t, dir, script)
			out, err := newTestEngine(t, dir, confinedBackend{b, tc.sandbox}, settings(), func(o *Options) {
				o.Repo = git.NewWorkspace(dir)
			}).Run(t.Context())
			if !tc.stops {
				// No sandbox: the agent could have run the script itself,
				// and ralph's git does (the control for the cases above).
				require.NoError(t, err)
				assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
				assert.FileExists(t, marker)
				return
			}
			var armed *GitArmedError
			require.ErrorAs(t, err, &armed)
			assert.Equal(t, []string{filepath.Join(".git", "config")}, armed.Changed)
			assert.Equal(t, "the agent of hat builder", armed.By)
			assert.Equal(t, runfiles.ReasonFatal, out.Reason)
			assert.Equal(t, 3, out.ExitCode)
			assert.Equal(t, 2, out.Iterations, "the builder's iteration is the last")
			assert.NoFileExists(t, marker, "ralph's git ran what the agent put in .git/config")
			recs := readLog(t, dir)
			var term runfiles.TerminateRecord
			require.NoError(t, json.Unmarshal(recs[len(recs)-1].Event.Payload, &term))
			assert.Equal(t, runfiles.CauseGitArmed, term.Cause)
			assert.Contains(t, term.Message, "the agent of hat builder changed .git/config, which decides what git runs in this repository")
			assert.Equal(t, 2, countTopic(recs, runfiles.TopicIterationFinished), "the builder's iteration is recorded, without git")
		})
	}
}

// The checks of a hat's work run confined as its agent: a gate on the
// event it published, the criteria of the completion it claimed; the
// baseline, about no one hat, as the loop's agents.
func TestChecksRunInTheSandboxOfTheHatWhoseWorkTheyCheck(t *testing.T) {
	var got []criteria.Sandbox
	s := settings()
	s.AcceptanceCriteria = []criteria.Spec{{Type: criteria.TypeCommandSucceeds, Command: "true"}}
	s.Gates = []Gate{{Hat: "builder", Topic: "build.done", Criteria: []criteria.Spec{{Type: criteria.TypeCommandSucceeds, Command: "true"}}}}
	out, err := newTestEngine(t, t.TempDir(), happy(), s, func(o *Options) {
		o.CheckSandbox = func(hat string) criteria.Sandbox { return passSandbox("sandbox of " + hat) }
		o.Verify = func(_ context.Context, _ string, specs []criteria.Spec, env criteria.Env) []criteria.Result {
			got = append(got, env.Sandbox)
			return []criteria.Result{{Spec: specs[0], Name: specs[0].Label(), Passed: true}}
		}
	}).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []criteria.Sandbox{passSandbox("sandbox of "), passSandbox("sandbox of builder"), passSandbox("sandbox of reviewer")}, got)
}

// A confined check's command that arms the repository stops the run too,
// and a git check after it in the same list does not run git.
func TestAConfinedCheckThatArmsTheRepositoryStopsTheRun(t *testing.T) {
	dir, script, marker := armingRepo(t)
	s := settings()
	s.AcceptanceCriteria = []criteria.Spec{
		// The agent's test, which arms once there is work to test.
		{Type: criteria.TypeCommandSucceeds, Command: "if [ -e built ]; then printf '[core]\\n\\tfsmonitor = " + script + "\\n' >> .git/config; fi"},
		{Type: criteria.TypeGitClean, Baseline: criteria.BaselineIgnore},
	}
	b := happy()
	b.byHat["builder"][0].onStart = func() { gittest.WriteFile(t, dir, "built", "x") }
	out, err := newTestEngine(t, dir, b, s, func(o *Options) {
		o.Repo = git.NewWorkspace(dir)
		o.CheckSandbox = func(hat string) criteria.Sandbox { return passSandbox(hat) }
	}).Run(t.Context())
	var armed *GitArmedError
	require.ErrorAs(t, err, &armed)
	assert.Equal(t, "the checks of hat reviewer's work", armed.By)
	assert.Equal(t, runfiles.ReasonFatal, out.Reason)
	assert.Equal(t, 3, out.Iterations, "no iteration after the reviewer's claim")
	assert.NoFileExists(t, marker, "git_clean, or the next snapshot, ran what the check's command put in .git/config")
}
