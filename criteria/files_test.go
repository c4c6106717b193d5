package criteria

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileFixture is a workspace with files, and symlinks into it and out of
// it, next to a directory outside holding a file that also says "Hello".
func fileFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	ws, outside = t.TempDir(), t.TempDir()
	writeFile(t, ws, "hello.txt", "Hello from Ralph\nsecond line\n")
	writeFile(t, ws, "sub/deep.txt", "deep")
	writeFile(t, ws, "empty.txt", "")
	writeFile(t, ws, "one.txt", "x")
	writeFile(t, outside, "secret.txt", "Hello from outside\n")
	require.NoError(t, os.Symlink("hello.txt", filepath.Join(ws, "link-in")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link-out")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "dir-out")))
	return ws, outside
}

func TestCheckFileExists(t *testing.T) {
	ws, outside := fileFixture(t)
	cases := []struct {
		name     string
		path     string
		pass     bool
		evidence string
	}{
		{"exists", "hello.txt", true, "hello.txt exists (29 bytes)"},
		{"one byte", "one.txt", true, "one.txt exists (1 byte)"},
		{"nested", "sub/deep.txt", true, "sub/deep.txt exists (4 bytes)"},
		{"directory", "sub", true, "sub exists (a directory)"},
		{"symlink inside", "link-in", true, "link-in exists (29 bytes)"},
		{"absolute inside", filepath.Join(ws, "hello.txt"), true, "exists (29 bytes)"},
		{"missing", "nope.txt", false, "nope.txt does not exist in the workspace"},
		{"missing under a file", "hello.txt/x", false, "hello.txt/x"},
		{"dot-dot", "../x", false, `path "../x" is outside the workspace`},
		{"absolute outside", filepath.Join(outside, "secret.txt"), false, "is outside the workspace"},
		{"symlink outside", "link-out", false, `path "link-out" leads through a symlink to`},
		{"symlinked dir outside", "dir-out/secret.txt", false, `path "dir-out/secret.txt" leads through a symlink to`},
		{"symlinked dir outside, missing file", "dir-out/none.txt", false, "leads through a symlink to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(t.Context(), ws, Spec{Type: TypeFileExists, Path: tc.path}, Env{})
			assert.Equal(t, tc.pass, r.Passed, r.Evidence)
			assert.Contains(t, r.Evidence, tc.evidence)
			assert.False(t, r.Interrupted)
			assert.Equal(t, "file_exists "+tc.path, r.Name)
		})
	}
}

func TestCheckFileContains(t *testing.T) {
	ws, _ := fileFixture(t)
	cases := []struct {
		name     string
		spec     Spec
		pass     bool
		evidence string
	}{
		{"text", Spec{Type: TypeFileContains, Path: "hello.txt", Text: "Hello from Ralph"}, true,
			`hello.txt contains "Hello from Ralph" (line 1)`},
		{"text on line 2", Spec{Type: TypeFileContains, Path: "hello.txt", Text: "second"}, true,
			`hello.txt contains "second" (line 2)`},
		{"text missing", Spec{Type: TypeFileContains, Path: "hello.txt", Text: "Goodbye"}, false,
			"hello.txt does not contain \"Goodbye\"; it begins:\nHello from Ralph\nsecond line\n"},
		{"regex", Spec{Type: TypeFileContains, Path: "hello.txt", Regex: `from \w+$`}, true,
			`hello.txt contains a match for /from \w+$/ (line 1)`},
		{"regex anchors lines", Spec{Type: TypeFileContains, Path: "hello.txt", Regex: `^second`}, true,
			"(line 2)"},
		{"regex missing", Spec{Type: TypeFileContains, Path: "hello.txt", Regex: `^Goodbye`}, false,
			"hello.txt does not contain a match for /^Goodbye/"},
		{"contains_text alias", Spec{Type: TypeContainsText, Path: "hello.txt", Text: "Ralph"}, true,
			`hello.txt contains "Ralph" (line 1)`},
		{"empty file", Spec{Type: TypeFileContains, Path: "empty.txt", Text: "x"}, false,
			`empty.txt does not contain "x"; the file is empty`},
		{"missing file", Spec{Type: TypeFileContains, Path: "nope.txt", Text: "x"}, false,
			"nope.txt does not exist in the workspace"},
		{"directory", Spec{Type: TypeFileContains, Path: "sub", Text: "x"}, false,
			"read sub: is a directory, not a file"},
		// secret.txt says Hello too: following the link would pass.
		{"symlink outside", Spec{Type: TypeFileContains, Path: "link-out", Text: "Hello"}, false,
			"leads through a symlink to"},
		{"dot-dot", Spec{Type: TypeFileContains, Path: "../secret.txt", Text: "Hello"}, false,
			"is outside the workspace"},
		{"bad regex", Spec{Type: TypeFileContains, Path: "hello.txt", Regex: "("}, false,
			"missing closing )"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(t.Context(), ws, tc.spec, Env{})
			assert.Equal(t, tc.pass, r.Passed, r.Evidence)
			assert.Contains(t, r.Evidence, tc.evidence)
		})
	}
}

func TestCheckWorkspaceProblems(t *testing.T) {
	cases := []struct {
		name      string
		workspace string
		spec      Spec
		evidence  string
	}{
		{"missing workspace", filepath.Join(t.TempDir(), "gone"), Spec{Type: TypeGitClean}, "workspace: stat "},
		{"unknown type", t.TempDir(), Spec{Type: "file_exist", Path: "a"}, `did you mean "file_exists"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(t.Context(), tc.workspace, tc.spec, Env{})
			assert.False(t, r.Passed)
			assert.False(t, r.Interrupted)
			assert.Contains(t, r.Evidence, tc.evidence)
		})
	}
}
