package scriptagent

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/scriptagent/script"
)

// TestMain lets the test binary stand in for the agent: run with
// SCRIPTAGENT_AS_AGENT set, it is scriptagent.
func TestMain(m *testing.M) {
	if os.Getenv("SCRIPTAGENT_AS_AGENT") != "" {
		Main()
	}
	os.Exit(m.Run())
}

func TestExpandTemplates(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cases := map[string]string{
		"run {{run}}":                       "run 7",
		`"resetsAt":{{now+3}}`:              `"resetsAt":1800000003`,
		"{{now+0}} {{now+-5}} {{now+3600}}": "1800000000 1799999995 1800003600",
		"{{now}} {{now+x}} {{ run }}":       "{{now}} {{now+x}} {{ run }}", // not templates: left alone
	}
	for in, want := range cases {
		if got := expandTemplates(in, "7", now); got != want {
			t.Errorf("expandTemplates(%q) = %q, want %q", in, got, want)
		}
	}
}

type agentRun struct {
	code           int
	stdout, stderr string
}

// runAgent runs the agent once in dir with the script sc.
func runAgent(t *testing.T, dir string, sc script.Script) agentRun {
	t.Helper()
	state := t.TempDir()
	path := filepath.Join(state, "script.json")
	require.NoError(t, sc.WriteFile(path))
	cmd := exec.Command(os.Args[0], "the prompt")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SCRIPTAGENT_AS_AGENT=1", "SCRIPTAGENT_SCRIPT="+path,
		"SCRIPTAGENT_STATE="+state, "RALPH_ITERATION=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return agentRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestShRunsInTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	r := runAgent(t, dir, script.Script{Steps: []script.Step{{
		Write: map[string]string{"a.txt": "from write\n"},
		Sh:    "cat a.txt; echo to stderr >&2; pwd > where.txt",
		Say:   "after sh",
	}}})
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "from write\nafter sh\n", r.stdout, "sh runs after write, before say, its output passing through")
	assert.Equal(t, "to stderr\n", r.stderr)
	where, err := os.ReadFile(filepath.Join(dir, "where.txt"))
	require.NoError(t, err)
	resolved, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Equal(t, resolved, strings.TrimSpace(string(where)))
}

func TestShStatusBecomesTheExitStatus(t *testing.T) {
	r := runAgent(t, t.TempDir(), script.Script{Steps: []script.Step{{Sh: "exit 4", Say: "still said"}}})
	assert.Equal(t, 4, r.code)
	assert.Equal(t, "still said\n", r.stdout, "the rest of the step runs")

	r = runAgent(t, t.TempDir(), script.Script{Steps: []script.Step{{Sh: "exit 4", Exit: 2}}})
	assert.Equal(t, 2, r.code, "exit wins over sh's status")

	r = runAgent(t, t.TempDir(), script.Script{Steps: []script.Step{{Sh: "true"}}})
	assert.Equal(t, 0, r.code)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

func TestCommitCommitsEverything(t *testing.T) {
	// No git identity anywhere: the agent falls back to its own.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	git(t, dir, "init", "-q", ".")
	r := runAgent(t, dir, script.Script{Steps: []script.Step{{
		Write:  map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"},
		Sh:     "echo made by sh > c.txt",
		Commit: "add a, b and c",
	}}})
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "add a, b and c scriptagent", git(t, dir, "log", "--format=%s %an"))
	assert.Equal(t, "a.txt\nc.txt\nsub/b.txt", git(t, dir, "ls-files"))
	assert.Empty(t, git(t, dir, "status", "--porcelain"))

	r = runAgent(t, dir, script.Script{Steps: []script.Step{{Commit: "nothing new", Say: "done"}}})
	require.Equal(t, 0, r.code, "nothing to commit is not an error: %s", r.stderr)
	assert.Equal(t, "add a, b and c", git(t, dir, "log", "--format=%s"))
}

func TestCommitOutsideARepositoryFails(t *testing.T) {
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	r := runAgent(t, t.TempDir(), script.Script{Steps: []script.Step{{Write: map[string]string{"a.txt": "a"}, Commit: "x"}}})
	assert.Equal(t, 97, r.code)
	assert.Contains(t, r.stderr, "commit: git add")
}
