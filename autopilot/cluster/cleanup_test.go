package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// A done task's refs are deleted in one push, the ones the remote lacks
// among them; a remote that refuses to delete a ref it lacks (a hook here,
// some forges' own checks) gets only those it has.
func TestDeleteRemoteRefs(t *testing.T) {
	for _, refuses := range []bool{false, true} {
		name := "warns of a missing ref"
		if refuses {
			name = "refuses to delete a missing ref"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			url, base := gittest.SharedRemote(t)
			repo := git.Repo{Dir: filepath.Join(t.TempDir(), "coordinator")}
			gittest.Run(t, ".", "clone", "--quiet", url, repo.Dir)
			gittest.Run(t, repo.Dir, "push", "--quiet", url, base+":"+WIPRef("t-1"), base+":refs/heads/"+TaskBranch("t-1"))
			if refuses {
				// Refuses any push that deletes a ref the remote does not
				// have: a deletion's old value is the zero id.
				hook := "#!/bin/sh\nwhile read old new ref; do\n  [ \"$old\" = 0000000000000000000000000000000000000000 ] && [ \"$new\" = \"$old\" ] && exit 1\ndone\nexit 0\n"
				require.NoError(t, os.WriteFile(filepath.Join(url, "hooks", "pre-receive"), []byte(hook), 0o755))
			}

			refs := []string{WIPRef("t-1"), MergeRef("t-1"), "refs/heads/" + TaskBranch("t-1")}
			require.NoError(t, deleteRemoteRefs(ctx, repo, url, refs))
			for _, ref := range refs {
				assert.Empty(t, gittest.Run(t, repo.Dir, "ls-remote", url, ref), ref)
			}
		})
	}
}
