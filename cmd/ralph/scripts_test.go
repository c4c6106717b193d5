package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ralph-loop/ralph/events"
)

// TestScripts runs the command-line scenarios in testdata/script/*.txtar:
// each is a scratch workspace (a git repository) holding the files the
// archive lists, and a script of commands run in it. Besides testscript's
// own commands (cmp, cmpenv, stdout, stderr, exists, …, see
// go doc github.com/rogpeppe/go-internal/testscript) a script has:
//
//	ralph ARGS...     runs the built ralph binary; it must exit 0
//	! ralph ARGS...   the same, but it must exit non-zero
//	exitcode N        the last ralph exited with code N
//	topics T...       the last command's stdout is event lines (ralph
//	                  events --json) with exactly these topics, in order;
//	                  with none, it has no lines
//
// $WORK is the workspace; scriptagent (the scripted agent) is on $PATH.
// Run one script with go test ./cmd/ralph/ -run TestScripts/NAME.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(agentBin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			cmd := exec.Command("git", "init", "-q", ".")
			cmd.Dir = env.WorkDir
			if out, err := cmd.CombinedOutput(); err != nil {
				env.T().Fatal("git init: " + string(out))
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"ralph":    scriptRalph,
			"exitcode": scriptExitCode,
			"topics":   scriptTopics,
		},
	})
}

// scriptRalph runs ralph in the script's directory and environment, and
// keeps its exit code for exitcode.
func scriptRalph(ts *testscript.TestScript, neg bool, args []string) {
	err := ts.Exec(ralphBin, args...)
	code := exitCodeOf(err)
	ts.Setenv("RALPH_TEST_EXIT", strconv.Itoa(code))
	switch {
	case code < 0:
		ts.Fatalf("ralph did not run to its end: %v", err)
	case neg && code == 0:
		ts.Fatalf("ralph exited 0, want non-zero")
	case !neg && code != 0:
		ts.Fatalf("ralph exited %d, want 0", code)
	}
}

func scriptExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode N")
	}
	if got := ts.Getenv("RALPH_TEST_EXIT"); got != args[0] {
		ts.Fatalf("ralph exited %s, want %s", got, args[0])
	}
}

func scriptTopics(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: topics TOPIC...")
	}
	got := []string{}
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile("stdout")), "\n") {
		if line == "" {
			continue
		}
		ev, err := events.ParseLine([]byte(line))
		if err != nil {
			ts.Fatalf("not an event line: %s: %v", line, err)
		}
		got = append(got, ev.Topic)
	}
	if !slices.Equal(got, args) {
		ts.Fatalf("topics %v, want %v", got, args)
	}
}
