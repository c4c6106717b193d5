package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/golden"
)

// TestScripts runs the command-line scenarios in testdata/script/*.txtar:
// each is a scratch workspace (a git repository) holding the files the
// archive lists, and a script of commands run in it. Besides testscript's
// own commands (cmp, cmpenv, stdout, stderr, exists, …, see
// go doc github.com/rogpeppe/go-internal/testscript) a script has:
//
//	ralph ARGS...     runs ralph (this test binary's registered command,
//	                  see TestMain); it must exit 0
//	! ralph ARGS...   the same, but it must exit non-zero
//	exec scriptagent  the scripted agent (internal/scriptagent), on $PATH
//	                  for ralph.yml's cli.command
//	exitcode N        the last ralph exited with code N
//	topics T...       the last command's stdout is event lines (ralph
//	                  events --json) with exactly these topics, in order;
//	                  with none, it has no lines
//	flow              prints the current run's story (see workspace.flow)
//	                  to stdout, for a cmp: each routable event as "source
//	                  topic", each iteration as "finished hat outcome", and
//	                  how the run ended as "terminate reason"
//	capture NAME      sets $NAME to the last command's stdout, trimmed
//
// $WORK is the workspace; the scripted agent reads its script from
// $WORK/agent.json and keeps its counters and the prompts it got
// (prompt-N.txt) in $AGENTSTATE. $SRC is ralph's source tree, $TESTBIN the
// directory of the registered ralph (for a script that sets its own $PATH).
// With -update, a cmp whose second file is in the archive rewrites that file
// from what the script produced.
// Run one script with go test ./cmd/ralph/ -run TestScripts/NAME.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: golden.Updating(),
		Setup:         setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": scriptExitCode,
			"topics":   scriptTopics,
			"flow":     scriptFlow,
			"capture":  scriptCapture,
		},
	})
}

// setupScript makes the script's workspace a git repository and sets the
// variables TestScripts documents.
func setupScript(env *testscript.Env) error {
	gittest.Run(env.T().(testing.TB), env.WorkDir, "init", "-q", ".")
	src, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	state := filepath.Join(env.WorkDir, ".tmp", "agent")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	bin := ralphBin
	if raceRalph != "" {
		// The scenarios run the race-built ralph (see raceRalph).
		bin = raceRalph
		env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
	}
	for name, value := range map[string]string{"GORACE": os.Getenv("GORACE"), "SRC": src, "TESTBIN": filepath.Dir(bin), "AGENTSTATE": state,
		"SCRIPTAGENT_SCRIPT": filepath.Join(env.WorkDir, "agent.json"), "SCRIPTAGENT_STATE": state, SandboxWriteEnv: state} {
		env.Setenv(name, value)
	}
	exits := filepath.Join(env.WorkDir, ".tmp", "ralph-exit")
	env.Setenv(exitFileEnv, exits)
	return os.WriteFile(exits, nil, 0o644)
}

// exitFileEnv names the file to which the registered ralph writes its exit
// code: testscript's ralph command says only whether it was 0. The file
// reads "running" until ralph ends, so a ralph that never got there (killed,
// or still in the background) is not taken for the one before it.
const exitFileEnv = "RALPH_TEST_EXIT_FILE"

func scriptExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode N")
	}
	got := strings.TrimSpace(ts.ReadFile(ts.Getenv(exitFileEnv)))
	switch got {
	case "":
		ts.Fatalf("no ralph has run yet")
	case exitRunning:
		ts.Fatalf("the last ralph did not run to its end")
	case args[0]:
	default:
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

func scriptFlow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: flow")
	}
	rel := strings.TrimSpace(ts.ReadFile(".ralph/current-events"))
	recs, err := events.NewReader(ts.MkAbs(rel), 0).Read()
	ts.Check(err)
	for _, line := range flowOf(recs) {
		fmt.Fprintln(ts.Stdout(), line)
	}
}

func scriptCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: capture NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}
