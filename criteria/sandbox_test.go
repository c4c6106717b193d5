package criteria

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSandbox stands in for internal/sandbox's Agent (whose real
// confinement the end-to-end tests drive): it marks the command's
// environment, records its cleanup, and explains an output line that
// names refused.
type fakeSandbox struct {
	confined, cleaned int
	refuse            error
}

func (s *fakeSandbox) Confine(cmd *exec.Cmd) (func(), error) {
	if s.refuse != nil {
		return nil, s.refuse
	}
	s.confined++
	cmd.Env = append(cmd.Env, "CONFINED=yes")
	return func() { s.cleaned++ }, nil
}

func (s *fakeSandbox) Denied(text string) string {
	if strings.Contains(text, "Permission denied") {
		return "the sandbox (fake) refused a write to /outside"
	}
	return ""
}

func TestACheckRunsItsCommandInTheSandbox(t *testing.T) {
	ws := t.TempDir()
	sb := &fakeSandbox{}
	r := Check(t.Context(), ws, Spec{Type: TypeCommandSucceeds, Command: `test "$CONFINED" = yes`}, Env{Sandbox: sb})
	assert.True(t, r.Passed, r.Evidence)
	assert.Equal(t, 1, sb.confined)
	assert.Equal(t, 1, sb.cleaned, "what the sandbox made is removed once the command is gone")

	r = Check(t.Context(), ws, Spec{Type: TypeCommandSucceeds, Command: `echo "sh: 1: cannot create /outside: Permission denied" >&2; exit 2`}, Env{Sandbox: sb})
	assert.False(t, r.Passed)
	assert.True(t, strings.HasSuffix(r.Evidence, "exit status 2, want 0\nthe sandbox (fake) refused a write to /outside"), r.Evidence)

	r = Check(t.Context(), ws, Spec{Type: TypeCommandSucceeds, Command: `echo Permission denied`}, Env{Sandbox: sb})
	assert.True(t, r.Passed)
	assert.NotContains(t, r.Evidence, "refused", "a command that passed is not explained")

	r = Check(t.Context(), ws, Spec{Type: TypeCommandSucceeds, Command: `true`}, Env{Sandbox: &fakeSandbox{refuse: errors.New("no launcher")}})
	assert.False(t, r.Passed)
	assert.Contains(t, r.Evidence, "could not run it: confine it: no launcher")
}

// A check that would run git after a confined command armed the
// repository fails instead, and git does not run.
func TestAGitCheckAsksBeforeRunningGit(t *testing.T) {
	ws := newRepo(t)
	commitFile(t, ws, "a.txt", "a", "start")
	asked := 0
	env := Env{BeforeGit: func() error { asked++; return errors.New("the repository was armed") }}
	for _, typ := range []string{TypeGitClean, TypeCommitMade} {
		r := Check(t.Context(), ws, Spec{Type: typ}, env)
		assert.False(t, r.Passed)
		assert.Equal(t, "not checked: the repository was armed", r.Evidence)
	}
	assert.Equal(t, 2, asked)
	r := Check(t.Context(), ws, Spec{Type: TypeGitClean}, Env{BeforeGit: func() error { return nil }})
	require.True(t, r.Passed, r.Evidence)
}
