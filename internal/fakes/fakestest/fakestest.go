// Package fakestest builds the fake tk and bd programs (internal/fakes/tk,
// internal/fakes/bd) for tests: once per test binary, into a temporary
// directory that a test puts first on PATH.
package fakestest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once   sync.Once
	binDir string
	errOut string
)

// Install builds the fakes, if this test binary has not yet, and returns
// the directory that holds them as tk and bd. The directory outlives the
// test that asked first: it is shared by the whole test binary and left in
// the system's temporary directory, which is cleaned by the OS.
func Install(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, err := os.MkdirTemp("", "ralph-fakes-")
		if err != nil {
			errOut = err.Error()
			return
		}
		_, here, _, _ := runtime.Caller(0)
		fakes := filepath.Dir(filepath.Dir(here))
		for _, name := range []string{"tk", "bd"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), ".")
			cmd.Dir = filepath.Join(fakes, name)
			if out, err := cmd.CombinedOutput(); err != nil {
				errOut = "go build " + name + ": " + err.Error() + "\n" + string(out)
				return
			}
		}
		binDir = dir
	})
	if errOut != "" {
		t.Fatalf("building the fake tk and bd: %s", errOut)
	}
	return binDir
}

// UsePath puts the fakes first on PATH for the test (t.Setenv, so the test
// must not be parallel) and returns their directory.
func UsePath(t *testing.T) string {
	t.Helper()
	dir := Install(t)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}
