package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quickStartMarker precedes each fenced block of the docs that a reader
// types as it is: TestQuickStartsRunAsWritten runs those blocks.
const quickStartMarker = "<!-- quick start: run as written by TestQuickStartsRunAsWritten -->"

// quickStarts are the marked blocks of a page, in order.
func quickStarts(t *testing.T, page string) []string {
	t.Helper()
	text := readText(t, filepath.Join("..", "..", page))
	var blocks []string
	for _, part := range strings.Split(text, quickStartMarker)[1:] {
		part = strings.TrimLeft(part, "\n")
		require.True(t, strings.HasPrefix(part, "```sh\n"), "%s: a quick start marker is followed by a ```sh block", page)
		body, _, ok := strings.Cut(strings.TrimPrefix(part, "```sh\n"), "\n```")
		require.True(t, ok, "%s: a quick start block ends", page)
		blocks = append(blocks, body+"\n")
	}
	return blocks
}

// runQuickStart runs block with sh -e in a new directory, with the ralph
// under test first on PATH, a git identity and nothing of the user's
// configuration, and returns that directory.
func runQuickStart(t *testing.T, block string) (dir string, r result) {
	t.Helper()
	dir = t.TempDir()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", block)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Reader", "GIT_AUTHOR_EMAIL=reader@example.com",
		"GIT_COMMITTER_NAME=Reader", "GIT_COMMITTER_EMAIL=reader@example.com",
		"PATH="+filepath.Dir(ralphBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir, runProcess(t, cmd)
}

// The README's and the docs' quick starts work as a reader types them,
// with the command backend and a script for the agent.
func TestQuickStartsRunAsWritten(t *testing.T) {
	t.Parallel()
	t.Run("README five minutes", func(t *testing.T) {
		blocks := quickStarts(t, "README.md")
		require.Len(t, blocks, 1)
		dir, r := runQuickStart(t, blocks[0])
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "wrote "+filepath.Join(dir, "hello", "ralph.yml")+" (preset solo, backend command)")
		hello, err := os.ReadFile(filepath.Join(dir, "hello", "hello.txt"))
		require.NoError(t, err)
		assert.Contains(t, string(hello), "hello from iteration 1 (worker)")
	})
	t.Run("autopilot five minutes", func(t *testing.T) {
		blocks := quickStarts(t, "docs/autopilot.md")
		require.Len(t, blocks, 1)
		dir, r := runQuickStart(t, blocks[0])
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		repo := filepath.Join(dir, "tracked")
		assert.Contains(t, r.stdout, "2 tasks ready in checklist; 2 slots at once")
		assert.Contains(t, r.stdout, "write-the-first-file (Write the first file) [P0]: starts in slot 1")
		assert.Contains(t, r.stdout, "write-the-second-file (Write the second file) [P0]: starts in slot 2")
		assert.NotContains(t, r.stderr, "would not start")
		assert.Contains(t, r.stderr, "autopilot ended (all done, exit 0): 2 completed, 0 failed")
		for _, task := range []string{"write-the-first-file", "write-the-second-file"} {
			assert.Equal(t, "written for "+task, git(t, repo, "show", "HEAD:"+task+".txt"), "%s is merged", task)
		}
		assert.Contains(t, git(t, repo, "show", "HEAD:TODO.md"), "- [x] Write the second file", "the tracker's change is committed")
	})
}
