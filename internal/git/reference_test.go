package git

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// referenceFingerprint is the straightforward way to fingerprint a
// repository, which Snapshot must agree with on every change: HEAD, `git
// status --porcelain=v1`, the diff against HEAD, and the content of every
// untracked file, each read by a process or in full every time.
func referenceFingerprint(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	pathspec := []string{"--", ".", ":(exclude)" + StateDir}
	for _, args := range [][]string{
		{"rev-parse", "HEAD"},
		{"status", "--porcelain=v1", "-z", "--untracked-files=all"},
		{"diff", "--binary", "HEAD"},
	} {
		if args[0] != "rev-parse" {
			args = append(args, pathspec...)
		}
		section(h, args[0], []byte(gittest.Run(t, dir, args...)))
	}
	untracked := gittest.Run(t, dir, append([]string{"ls-files", "--others", "--exclude-standard", "-z"}, pathspec...)...)
	for name := range strings.SplitSeq(untracked, "\x00") {
		if name == "" {
			continue
		}
		section(h, "untracked", []byte(name))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if !errors.Is(err, fs.ErrNotExist) {
			require.NoError(t, err)
		}
		_, _ = h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
