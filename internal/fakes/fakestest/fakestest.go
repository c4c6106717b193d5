// Package fakestest builds the fake tk and bd programs (internal/fakes/tk,
// internal/fakes/bd) for tests, once per test binary, into a directory a
// test puts first on PATH.
package fakestest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once     sync.Once
	binDir   string
	buildErr error
)

// fakes are the programs built, by directory under internal/fakes.
var fakes = []string{"tk", "bd"}

// Install builds the fakes, if this test binary has not yet, and returns
// the directory that holds them as tk and bd.
func Install(t testing.TB) string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Dir is Install for a TestMain, which has no testing.TB: a test binary
// whose tests run in parallel puts the directory on PATH once, before they
// start, since t.Setenv (UsePath) is not allowed in a parallel test.
func Dir() (string, error) {
	once.Do(func() { binDir, buildErr = build() })
	if buildErr != nil {
		return "", fmt.Errorf("building the fake tk and bd: %w", buildErr)
	}
	return binDir, nil
}

// UsePath puts the fakes first on PATH for the test (with t.Setenv, so
// the test must not be parallel) and returns their directory.
func UsePath(t testing.TB) string {
	t.Helper()
	dir := Install(t)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// build builds the fakes into a directory of the system's temporary
// directory named by a hash of their sources and the Go version, which
// outlives one test (every test of the binary shares it) and is reused by
// the next run while the sources are the same, rather than piling up.
func build() (string, error) {
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(here))
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, name := range fakes {
		src, err := os.ReadFile(filepath.Join(root, name, "main.go"))
		if err != nil {
			return "", err
		}
		h.Write(src)
	}
	dir := filepath.Join(os.TempDir(), "ralph-fakes-"+hex.EncodeToString(h.Sum(nil))[:16])
	if complete(dir) {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "ralph-fakes-build-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for _, name := range fakes {
		cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, name), ".")
		cmd.Dir = filepath.Join(root, name)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", name, err, out)
		}
	}
	// Another test binary may have put it there first.
	if err := os.Rename(tmp, dir); err != nil && !complete(dir) {
		return "", err
	}
	return dir, nil
}

func complete(dir string) bool {
	for _, name := range fakes {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
