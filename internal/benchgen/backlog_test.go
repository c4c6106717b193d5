package benchgen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/benchgen"
)

// files reads every file under dir by its path relative to dir.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(data)
		return err
	}))
	return out
}

// The same n writes the same files, for every tracker, and says how many
// of its tasks are ready and blocked (every tenth waits, but in a
// checklist); the plan's tests (autopilot) read them through the sources.
func TestWriteBacklogIsDeterministic(t *testing.T) {
	for _, kind := range benchgen.Sources {
		t.Run(kind, func(t *testing.T) {
			a, b := t.TempDir(), t.TempDir()
			bl, err := benchgen.WriteBacklog(a, kind, 30)
			require.NoError(t, err)
			_, err = benchgen.WriteBacklog(b, kind, 30)
			require.NoError(t, err)
			assert.Equal(t, files(t, a), files(t, b))
			assert.Contains(t, bl.Source, "type: "+kind)
			if kind == "checklist" {
				assert.Equal(t, benchgen.Backlog{Source: bl.Source, Ready: 30}, bl)
			} else {
				assert.Equal(t, benchgen.Backlog{Source: bl.Source, Ready: 27, Blocked: 3}, bl)
			}
		})
	}
	_, err := benchgen.WriteBacklog(t.TempDir(), "jira", 3)
	assert.ErrorContains(t, err, `no backlog for the source "jira"`)
}
