// Package gittest makes real git repositories for tests: a fixed identity,
// none of the user's configuration, and failures reported through the test.
package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// WriteFile writes content to dir/name, creating directories as needed.
func WriteFile(t testing.TB, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// Run runs git in dir with a fixed identity and without the user's
// configuration, and returns its trimmed output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Output(dir, args...)
	require.NoError(t, err)
	return out
}

// Output is Run for a caller that has no test to fail (a fake running in
// a goroutine of its own): the error names the command and quotes its
// output.
func Output(dir string, args ...string) (string, error) {
	full := append([]string{"-C", dir,
		"-c", "user.name=Ralph Test", "-c", "user.email=ralph@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// NewRepo is an empty git repository in a temporary directory.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	Run(t, dir, "init", "-q")
	return dir
}

// CommitFile writes a file, commits it with subject, and returns the new
// HEAD.
func CommitFile(t testing.TB, dir, name, content, subject string) string {
	t.Helper()
	WriteFile(t, dir, name, content)
	Run(t, dir, "add", name)
	Run(t, dir, "commit", "-q", "-m", subject)
	return Run(t, dir, "rev-parse", "HEAD")
}

// SharedRemote is a bare repository with one commit on main, as a team's
// shared remote; it returns its path (a URL git accepts) and that commit.
func SharedRemote(t testing.TB) (url, base string) {
	t.Helper()
	url = filepath.Join(t.TempDir(), "shared.git")
	Run(t, t.TempDir(), "init", "-q", "--bare", url)
	src := NewRepo(t)
	base = CommitFile(t, src, "README.md", "hi\n", "start")
	Run(t, src, "push", "-q", url, "HEAD:refs/heads/main")
	return url, base
}
