package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sized repository is the same tree on every run, committed whole,
// so that its figure compares like with like from one report to the next.
func TestSizedTaskRepoIsTheSameTreeCommittedOnce(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	b := &bench{work: t.TempDir(), scale: 1}
	var trees []string
	for _, name := range []string{"one", "two"} {
		dir, err := b.taskRepo(name, 3, true)
		require.NoError(t, err)
		tree, err := exec.Command("git", "-C", dir, "rev-parse", "main^{tree}").Output()
		require.NoError(t, err)
		trees = append(trees, string(tree))
		files, err := exec.Command("git", "-C", dir, "ls-files", "src").Output()
		require.NoError(t, err)
		assert.Equal(t, sizedRepoDirs*sizedRepoFilesDir, strings.Count(string(files), "\n"), "every generated file committed")
		commits, err := exec.Command("git", "-C", dir, "rev-list", "--count", "main").Output()
		require.NoError(t, err)
		assert.Equal(t, "1", strings.TrimSpace(string(commits)))
	}
	assert.Equal(t, trees[0], trees[1], "two runs generate the same tree")

	one, err := os.ReadFile(filepath.Join(b.work, "one", "src", "pkg07", "file03.go"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(one, []byte("package pkg07\n")))
	assert.GreaterOrEqual(t, len(one), sizedRepoFileSize)
	assert.Less(t, len(one), sizedRepoFileSize+200)
}

// The trivial repository stays as small as it was: its figure is the
// autopilot's own overhead, with nothing to check out.
func TestTrivialTaskRepoHasNoSizedTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	b := &bench{work: t.TempDir(), scale: 1}
	dir, err := b.taskRepo("trivial", 3, false)
	require.NoError(t, err)
	files, err := exec.Command("git", "-C", dir, "ls-files").Output()
	require.NoError(t, err)
	assert.Equal(t, ".gitignore\nTODO.md\nagent.sh\nralph.yml\n", string(files))
}
