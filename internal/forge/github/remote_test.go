package github_test

import (
	"path/filepath"
	"testing"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// remote is a bare repository with main, as the remote the autopilot
// pushes to, and a clone to push branches from.
type remote struct {
	url, clone string
}

func newRemote(t *testing.T) remote {
	t.Helper()
	url, _ := gittest.SharedRemote(t)
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, t.TempDir(), "clone", "-q", url, clone)
	return remote{url: url, clone: clone}
}

// branch pushes a branch off main that adds file.
func (r remote) branch(t *testing.T, name, file string) string {
	t.Helper()
	gittest.Run(t, r.clone, "checkout", "-q", "-B", name, "origin/main")
	sha := gittest.CommitFile(t, r.clone, file, name+"\n", "add "+file)
	gittest.Run(t, r.clone, "push", "-q", "-f", "origin", "HEAD:refs/heads/"+name)
	return sha
}
