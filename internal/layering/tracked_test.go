package layering

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// executableMagic starts the files `go build` and `go test -c` write: ELF,
// Mach-O (both byte orders, 32 and 64 bit, universal) and Windows' PE.
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// TestNoBuiltProgramIsTracked fails on a compiled program in the
// repository: a `go build` run in a package's directory leaves one there,
// and one committed by mistake makes every clone tens of megabytes larger.
func TestNoBuiltProgramIsTracked(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		if head := fileHead(t, filepath.Join(root, name)); isExecutable(head) {
			t.Errorf("%s is a compiled program; remove it with `git rm --cached %s` and add it to .gitignore", name, name)
		}
	}
}

// fileHead is a file's first bytes, nothing for one that is gone from the
// work tree (deleted, not yet committed) or is not a regular file.
func fileHead(t *testing.T, path string) []byte {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && n == 0 {
		return nil
	}
	return head[:n]
}

func isExecutable(head []byte) bool {
	for _, magic := range executableMagic {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return false
}
