//go:build unix

package criteria

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckCommandSucceeds(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, ws, "hello.txt", "hi")
	cases := []struct {
		name     string
		command  string
		exitCode *int
		extraEnv []string
		pass     bool
		evidence string
	}{
		{"exit 0", "echo built", nil, nil, true, "$ echo built\nbuilt\nexit status 0"},
		{"exit 1", "echo broken >&2; exit 1", nil, nil, false, "broken\nexit status 1, want 0"},
		{"expected exit 3", "exit 3", intPtr(3), nil, true, "exit status 3"},
		{"expected 3, got 0", "true", intPtr(3), nil, false, "exit status 0, want 3"},
		{"runs in the workspace", "test -f hello.txt", nil, nil, true, "exit status 0"},
		{"extra env", `test "$RALPH_TEST_VAR" = set`, nil, []string{"RALPH_TEST_VAR=set"}, true, "exit status 0"},
		{"stdin is /dev/null", "cat", nil, nil, true, "$ cat\nexit status 0"},
		{"no trailing newline", "printf partial", nil, nil, true, "partial\nexit status 0"},
		{"command not found", "ralph-no-such-command-xyz", nil, nil, false, "exit status 127, want 0"},
		{"killed by a signal", "kill -9 $$", nil, nil, false, "killed by signal 9 (killed), want exit status 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Type: TypeCommandSucceeds, Command: tc.command, ExitCode: tc.exitCode}
			r := Check(t.Context(), ws, spec, Env{ExtraEnv: tc.extraEnv})
			assert.Equal(t, tc.pass, r.Passed, r.Evidence)
			assert.Contains(t, r.Evidence, tc.evidence)
			assert.False(t, r.Interrupted)
		})
	}
}

func TestCheckLintClean(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cases := []struct {
		name     string
		command  string
		pass     bool
		evidence string
	}{
		{"clean", "true", true, "exit status 0"},
		{"findings", "echo 'main.go:3: unused x'; exit 1", false, "main.go:3: unused x\nexit status 1, want 0"},
		{"no command", "", false, `command is required; ralph cannot guess your linter: set command`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(t.Context(), ws, Spec{Type: TypeLintClean, Command: tc.command}, Env{})
			assert.Equal(t, tc.pass, r.Passed, r.Evidence)
			assert.Contains(t, r.Evidence, tc.evidence)
		})
	}
}

// readPgid reads the process group id a command under test wrote ($$ of
// the group's leading shell).
func readPgid(t *testing.T, ws string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "pgid"))
	require.NoError(t, err, "the command did not record its pgid")
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pgid
}

// assertGroupGone checks that no process of the group is left, zombies
// included.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	err := syscall.Kill(-pgid, 0)
	assert.True(t, errors.Is(err, syscall.ESRCH), "process group %d still has members (kill -0: %v)", pgid, err)
}

// The commands write their pgid first, then leave a background child
// and wait in the foreground, so both the shell and its child must die.
func TestCheckTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command string
		minTime time.Duration
	}{
		{"SIGTERM suffices", "echo $$ > pgid; sleep 30 & sleep 30", 0},
		// Ignored signals are inherited, so both sleeps ignore SIGTERM too.
		{"SIGTERM ignored, SIGKILL follows", "trap '' TERM; echo $$ > pgid; sleep 30 & sleep 30", killGrace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			// The limit leaves the shell time to record its pgid even on a
			// loaded machine.
			spec := Spec{Type: TypeCommandSucceeds, Command: tc.command, Timeout: 2 * time.Second}
			r := Check(t.Context(), ws, spec, Env{})
			assert.False(t, r.Passed)
			assert.False(t, r.Interrupted, "its own time limit is a failure, not an interruption")
			assert.Contains(t, r.Evidence, "stopped: the check timed out after 2s; its process group was killed")
			assert.GreaterOrEqual(t, r.Duration, 2*time.Second+tc.minTime)
			assert.Less(t, r.Duration, 2*time.Second+tc.minTime+20*time.Second, "the sleeps (30s) were cut short")
			assertGroupGone(t, readPgid(t, ws))
		})
	}
}

func TestCheckStopsWhatTheCommandLeavesBehind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command string
	}{
		{"background job holding the output", "echo $$ > pgid; sleep 30 &"},
		{"background job with its own output", "echo $$ > pgid; sleep 30 >/dev/null 2>&1 &"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			r := Check(t.Context(), ws, Spec{Type: TypeCommandSucceeds, Command: tc.command}, Env{})
			assert.True(t, r.Passed, r.Evidence)
			assert.Less(t, r.Duration, 20*time.Second, "the check must not wait for the background job (30s)")
			assertGroupGone(t, readPgid(t, ws))
		})
	}
}

func TestCheckInterrupted(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		// Interrupt once the command is running: it has recorded its pgid.
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(ws, "pgid")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := Check(ctx, ws, Spec{Type: TypeCommandSucceeds, Command: "echo $$ > pgid.tmp && mv pgid.tmp pgid; sleep 30"}, Env{})
	assert.False(t, r.Passed)
	assert.True(t, r.Interrupted)
	assert.Contains(t, r.Evidence, "stopped: interrupted (context canceled)")
	assertGroupGone(t, readPgid(t, ws))
}

func TestCheckKeepsTheTailOfTheOutput(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cmd := `i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; exit 1`
	r := Check(t.Context(), ws, Spec{Type: TypeTestsPass, Command: cmd}, Env{})
	assert.False(t, r.Passed)
	assert.Contains(t, r.Evidence, "line 2999\nexit status 1, want 0")
	assert.NotContains(t, r.Evidence, "line 0\n")
	assert.Less(t, len(r.Evidence), tailLimit+len(cmd)+200)
	_, after, found := strings.Cut(r.Evidence, "earlier bytes of output omitted]\n")
	require.True(t, found, r.Evidence)
	assert.True(t, strings.HasPrefix(after, "line "), "the tail starts at a line: %q", after[:20])
}

func TestCheckAll(t *testing.T) {
	t.Parallel()
	t.Run("in order", func(t *testing.T) {
		ws := t.TempDir()
		specs := []Spec{
			{Type: TypeCommandSucceeds, Command: "echo made > made.txt"},
			{Type: TypeFileContains, Path: "made.txt", Text: "made"},
			{Type: TypeFileExists, Path: "missing.txt"},
		}
		results := CheckAll(t.Context(), ws, specs, Env{})
		require.Len(t, results, 3)
		assert.True(t, results[0].Passed)
		assert.True(t, results[1].Passed, "the second sees what the first made")
		assert.False(t, results[2].Passed)
		for i, r := range results {
			assert.Equal(t, specs[i], r.Spec)
			assert.Equal(t, specs[i].Label(), r.Name)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ws := t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		specs := []Spec{
			{Type: TypeCommandSucceeds, Command: "touch ran"},
			{Type: TypeGitClean},
		}
		results := CheckAll(ctx, ws, specs, Env{})
		require.Len(t, results, 2)
		for _, r := range results {
			assert.False(t, r.Passed)
			assert.True(t, r.Interrupted)
			assert.Equal(t, "not checked: interrupted (context canceled)", r.Evidence)
		}
		assert.NoFileExists(t, filepath.Join(ws, "ran"))
	})
}
