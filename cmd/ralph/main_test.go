package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/fakes/fakestest"
)

// ralphBin is the command the test binary stands in for, as
// testscript.Main installs it: a copy of it in a directory first on the
// tests' PATH, running ralph. ralph starts its children (an autopilot's task
// loops, a worker's, the agent's `ralph emit`) through the path of its own
// executable, so they are this registered ralph too. agentBin is the
// scripted agent, built as a program of its own (buildScriptAgent) into a
// directory also first on PATH.
var (
	ralphBin string
	agentBin string
)

// The tests run in parallel (each calls t.Parallel), two at a time by
// default (-parallel is GOMAXPROCS): most of a test is waiting on the
// processes it started, in its own temporary directories. A test that sets
// the process's environment (t.Setenv) cannot, and one that holds ralph's
// time or memory to a bound near what it takes, or runs the real agent
// CLIs (agentLoopTimeout), does not; they run first, one at a time.
func TestMain(m *testing.M) {
	testscript.Main(withCommands{m}, map[string]func(){
		"ralph": ralphMain,
	})
}

// ralphMain is ralph's main as the test binary runs it: with the seams the
// test's environment sets (testSeams), and telling a script its exit code
// (exitFileEnv), which it keeps from the ralphs it starts.
func ralphMain() {
	launchIfAsked()
	exits := os.Getenv(exitFileEnv)
	_ = os.Unsetenv(exitFileEnv)
	report := func(s string) {
		if exits != "" {
			_ = os.WriteFile(exits, []byte(s), 0o644)
		}
	}
	report(exitRunning)
	code := exitcode.Fatal
	var err error
	if seams, err = seamsFromEnv(); err != nil {
		fmt.Fprintf(os.Stderr, "ralph: error: %v\n", err)
	} else {
		code = run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	report(strconv.Itoa(code))
	os.Exit(code)
}

// exitRunning is the exit file of a ralph that has not ended.
const exitRunning = "running"

// withCommands finds the registered command before the tests run: only
// then is it on PATH.
type withCommands struct{ m *testing.M }

func (w withCommands) Run() int {
	// A ralph built with -race sleeps a second as it exits, for late race
	// reports (GORACE's atexit_sleep_ms): the tests' hundreds of ralphs
	// would wait minutes for nothing. A race still fails the ralph that
	// had it (exit 66).
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	// The ralphs the tests start read no user config of the person who
	// runs them (config.UserFile); a test that wants one sets its own.
	userConfig, err := os.MkdirTemp("", "ralph-xdg-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "a directory for the user config: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(userConfig) }()
	_ = os.Setenv("XDG_CONFIG_HOME", userConfig)
	// The fake tk and bd are on every test's PATH, as ralph and
	// scriptagent are: a parallel test may not set PATH itself.
	fakes, err := fakestest.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = os.Setenv("PATH", fakes+string(os.PathListSeparator)+os.Getenv("PATH"))
	if ralphBin, err = exec.LookPath("ralph"); err != nil {
		fmt.Fprintf(os.Stderr, "the registered command ralph is not on PATH: %v\n", err)
		return 1
	}
	if raceBuild {
		plain, err := buildPlainRalph()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building ralph without -race: %v\n", err)
			return 1
		}
		defer func() { _ = os.RemoveAll(filepath.Dir(plain)) }()
		raceRalph, ralphBin = ralphBin, plain
		_ = os.Setenv("PATH", filepath.Dir(plain)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	agentDir, err := buildScriptAgent()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the scripted agent: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(agentDir) }()
	agentBin = filepath.Join(agentDir, "scriptagent")
	_ = os.Setenv("PATH", agentDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := w.m.Run()
	if shippedDir != "" {
		_ = os.RemoveAll(shippedDir)
	}
	return code
}

// raceRalph is the registered ralph when this test binary runs with -race
// and the tests' own ralphs are a plain build (buildPlainRalph): the
// command-line scenarios (TestScripts) still run it, so the race detector
// watches ralph's own processes there too.
var raceRalph string

// buildPlainRalph builds this test binary again without -race, as ralph,
// for the ralphs the tests start when it runs with -race. The race detector
// is for the test process: a race-built ralph takes several times as long
// to start (some 190 ms on an idle machine, over a second on a busy one)
// and runs several times slower, in every one of the tests' thousands of
// ralphs, which made the race-enabled unit pass as long as all the rest of
// CI. The end-to-end pass builds the same package without -race, so the
// go command's cache serves most of this build to one or the other.
func buildPlainRalph() (string, error) {
	dir, err := os.MkdirTemp("", "ralph-plain-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "ralph")
	out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("go test -c: %w: %s", err, out)
	}
	return bin, nil
}

// buildScriptAgent builds the scripted agent as a program of its own
// (internal/scriptagent/cmd/scriptagent) into a new directory, which the
// tests put first on PATH: a loop starts it at every iteration, and the
// registered command, this whole test binary (built with -race in the unit
// tests), takes several times as long to start. The agent is the tests'
// fixture, not ralph, so nothing of ralph goes unchecked for races.
func buildScriptAgent() (string, error) {
	dir, err := os.MkdirTemp("", "ralph-scriptagent-")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "scriptagent"), "../../internal/scriptagent/cmd/scriptagent").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return dir, nil
}

// shippedRalph is ralph built as it ships, without the test binary's
// testing packages, for the tests that measure what ralph holds in memory:
// the registered command maps pages of a larger binary, which would count
// against a bound set for ralph. Built once, on first use.
var shippedRalph = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ralph-shipped-")
	if err != nil {
		return "", err
	}
	shippedDir = dir
	bin := filepath.Join(dir, "ralph")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
})

// shippedDir holds the shipped build, removed when the tests end.
var shippedDir string
