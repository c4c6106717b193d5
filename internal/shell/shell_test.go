package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookPathOf stands for exec.LookPath on a PATH that holds sh at path, or
// none when path is empty; err is what the lookup says then.
func lookPathOf(path string, err error) func(string) (string, error) {
	return func(file string) (string, error) {
		if file != "sh" {
			return "", fmt.Errorf("looked up %q, not sh", file)
		}
		if path == "" {
			return "", err
		}
		return path, nil
	}
}

func TestFind(t *testing.T) {
	notFound := &exec.Error{Name: "sh", Err: exec.ErrNotFound}
	inDot := &exec.Error{Name: "sh", Err: exec.ErrDot}
	cases := []struct {
		name     string
		sh       string
		err      error
		goos     string
		want     string
		wantErr  []string // parts of the error's text
		wantHint string
	}{
		{name: "Git for Windows' sh on PATH", sh: `C:\Program Files\Git\bin\sh.exe`, goos: "windows", want: `C:\Program Files\Git\bin\sh.exe`},
		{name: "sh on a Unix PATH", sh: "/bin/sh", goos: "linux", want: "/bin/sh"},
		{
			name: "no sh on Windows", err: notFound, goos: "windows",
			wantErr:  []string{"hook on loop.started: there is no sh on PATH to run its shell command with", "executable file not found"},
			wantHint: `install Git for Windows (https://gitforwindows.org) with git on PATH; ralph finds the sh.exe in its bin folder`,
		},
		{
			name: "sh only in the current directory on Windows", err: inDot, goos: "windows",
			wantErr:  []string{"only in the current directory", "current directory"},
			wantHint: "install Git for Windows",
		},
		{
			name: "no sh on a Unix PATH", err: notFound, goos: "darwin",
			wantErr:  []string{"hook on loop.started: there is no sh on PATH"},
			wantHint: "put the directory that holds sh (usually /bin) on PATH",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find(lookPathOf(tc.sh, tc.err), tc.goos, "hook on loop.started")
			if tc.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			assert.Empty(t, got)
			var nf *NotFoundError
			require.ErrorAs(t, err, &nf)
			assert.ErrorIs(t, err, tc.err, "the lookup's own error is kept")
			for _, part := range tc.wantErr {
				assert.Contains(t, err.Error(), part)
			}
			assert.Contains(t, nf.Hint(), tc.wantHint)
			assert.Contains(t, err.Error(), nf.Hint(), "the message carries the fix where no hint is printed")
		})
	}
}

// Git for Windows' default install puts only Git\cmd on PATH: the sh.exe
// in Git\bin beside it is found, on Windows only.
func TestFindTheShOfGitForWindows(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Git")
	git := filepath.Join(root, "cmd", "git.exe")
	sh := filepath.Join(root, "bin", "sh.exe")
	lookPath := func(file string) (string, error) {
		switch file {
		case "git":
			return git, nil
		case sh:
			return sh, nil
		}
		return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
	}
	got, err := Find(lookPath, "windows", "criterion check")
	require.NoError(t, err)
	assert.Equal(t, sh, got)

	_, err = Find(lookPath, "linux", "criterion check")
	var nf *NotFoundError
	require.ErrorAs(t, err, &nf, "a Unix without sh is not helped by a git")

	noSh := func(file string) (string, error) {
		if file == "git" {
			return git, nil
		}
		return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
	}
	_, err = Find(noSh, "windows", "criterion check")
	require.ErrorAs(t, err, &nf, "a git without its sh.exe beside it")
}

// Command runs the script with the sh it finds, and refuses on a PATH
// with no sh before anything starts.
func TestCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		if _, err := exec.LookPath("sh"); err != nil {
			t.Skip("no sh on PATH")
		}
	}
	cmd, err := Command("criterion check", `printf '%s' "$0:$1"`)
	require.NoError(t, err)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(out), "sh:"), "sh -c ran the script: %q", out)

	t.Setenv("PATH", t.TempDir())
	cmd, err = Command("criterion check", "true")
	assert.Nil(t, cmd)
	var nf *NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "criterion check", nf.Feature)
	assert.True(t, errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist), "%v", err)
	_, err = Path("criterion check")
	assert.ErrorAs(t, err, &nf)
}
