package backends

// The fake agent: the test binary re-executed with RALPH_FAKE_AGENT=1 plays
// any CLI, so process tests run real processes without any agent installed.
// Tests point a backend at it with Options.Command = fakeAgentPath(t) and
// pass the protocol below in AgentRun.Env (which also proves that
// AgentRun.Env reaches the agent).
//
// # Protocol
//
//	RALPH_FAKE_AGENT=1          act as the fake agent instead of running tests
//	FAKE_AGENT_RECORD=<file>    first, write a JSON fakeRecord here: args, cwd,
//	                            environment, and all of stdin (read to EOF)
//	FAKE_AGENT_GRANDCHILD=1     then start a grandchild in the same process group
//	                            that ignores SIGTERM, holds stdout and stderr
//	                            open and sleeps for an hour
//	FAKE_AGENT_PIDS=<file>      then write "<own pid> <grandchild pid or 0>"
//	                            here (atomically, so a poller never sees half)
//	FAKE_AGENT_STDOUT=<file>    then copy this file to stdout (a canned stream)
//	FAKE_AGENT_STDERR=<file>    then copy this file to stderr
//	FAKE_AGENT_PRINT_ENV=1      then print its environment on stderr, as an
//	                            agent's `env` tool call or a crash dump would
//	FAKE_AGENT_ARG_FILE=<flag>=<file>  then copy this file to the path that
//	                            follows <flag> in the arguments (a CLI that
//	                            writes a side file, such as Copilot's usage)
//	FAKE_AGENT_IGNORE_TERM=1    ignore SIGTERM (set up before anything else)
//	FAKE_AGENT_SLEEP=<duration> then sleep this long (time.ParseDuration)
//	FAKE_AGENT_TICK=<duration>  while sleeping, print "tick" to stderr this often
//	FAKE_AGENT_EXIT=<n>         finally exit with this status (default 0)
//
// Signal tests only ever signal the fake's process group, never the test
// process itself.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const fakeAgentEnv = "RALPH_FAKE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(fakeAgentEnv) == "1" {
		os.Exit(fakeAgent())
	}
	os.Exit(m.Run())
}

// fakeRecord is what the fake agent saw, written to FAKE_AGENT_RECORD.
type fakeRecord struct {
	Args         []string          `json:"args"`
	Cwd          string            `json:"cwd"`
	Env          map[string]string `json:"env"`
	Stdin        string            `json:"stdin"`
	StdinDevNull bool              `json:"stdin_devnull"`
}

// fakeAgent runs the protocol in the file comment and returns the exit
// status.
func fakeAgent() int {
	if os.Getenv("FAKE_AGENT_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if err := fakeAgentSteps(); err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 99
	}
	if d := os.Getenv("FAKE_AGENT_SLEEP"); d != "" {
		if err := fakeSleep(d, os.Getenv("FAKE_AGENT_TICK")); err != nil {
			fmt.Fprintln(os.Stderr, "fake agent:", err)
			return 99
		}
	}
	code, _ := strconv.Atoi(os.Getenv("FAKE_AGENT_EXIT"))
	return code
}

func fakeAgentSteps() error {
	if path := os.Getenv("FAKE_AGENT_RECORD"); path != "" {
		if err := writeFakeRecord(path); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	grandchild := 0
	if os.Getenv("FAKE_AGENT_GRANDCHILD") == "1" {
		pid, err := startFakeGrandchild()
		if err != nil {
			return fmt.Errorf("grandchild: %w", err)
		}
		grandchild = pid
	}
	if path := os.Getenv("FAKE_AGENT_PIDS"); path != "" {
		if err := writeAtomically(path, fmt.Sprintf("%d %d", os.Getpid(), grandchild)); err != nil {
			return fmt.Errorf("pids: %w", err)
		}
	}
	if err := copyFileTo(os.Stdout, os.Getenv("FAKE_AGENT_STDOUT")); err != nil {
		return fmt.Errorf("stdout: %w", err)
	}
	if err := copyFileTo(os.Stderr, os.Getenv("FAKE_AGENT_STDERR")); err != nil {
		return fmt.Errorf("stderr: %w", err)
	}
	if os.Getenv("FAKE_AGENT_PRINT_ENV") == "1" {
		fmt.Fprintln(os.Stderr, strings.Join(os.Environ(), "\n"))
	}
	if spec := os.Getenv("FAKE_AGENT_ARG_FILE"); spec != "" {
		if err := writeArgFile(spec); err != nil {
			return fmt.Errorf("arg file: %w", err)
		}
	}
	return nil
}

// writeArgFile copies <file> to the argument after <flag>, for a spec
// "<flag>=<file>".
func writeArgFile(spec string) error {
	flag, src, _ := strings.Cut(spec, "=")
	args := os.Args[1:]
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return fmt.Errorf("no %s argument in %q", flag, args)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(args[i+1], data, 0o644)
}

func writeFakeRecord(path string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	stdin, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	rec := fakeRecord{Args: os.Args[1:], Cwd: cwd, Env: map[string]string{}, Stdin: string(stdin)}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		rec.Env[k] = v
	}
	if in, err := os.Stdin.Stat(); err == nil {
		if null, err := os.Stat(os.DevNull); err == nil {
			rec.StdinDevNull = os.SameFile(in, null)
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return writeAtomically(path, string(b))
}

// startFakeGrandchild starts the test binary once more as a long sleeper
// that ignores SIGTERM, inheriting stdout and stderr and the process group.
func startFakeGrandchild() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(withoutFakeVars(os.Environ()),
		fakeAgentEnv+"=1", "FAKE_AGENT_IGNORE_TERM=1", "FAKE_AGENT_SLEEP=1h")
	// It inherits GORACE from its parent, the fake.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

func withoutFakeVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "FAKE_AGENT_") && !strings.HasPrefix(kv, fakeAgentEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func fakeSleep(d, tick string) error {
	total, err := time.ParseDuration(d)
	if err != nil {
		return err
	}
	if tick == "" {
		time.Sleep(total)
		return nil
	}
	every, err := time.ParseDuration(tick)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(total)
	for time.Now().Before(deadline) {
		time.Sleep(every)
		fmt.Fprintln(os.Stderr, "tick")
	}
	return nil
}

func copyFileTo(w io.Writer, path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func writeAtomically(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// fakeAgentPath is the test binary, to be used as Options.Command.
func fakeAgentPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("find the test binary: %v", err)
	}
	return self
}

// fakeEnv builds AgentRun.Env for the fake agent from protocol variables
// given without their FAKE_AGENT_ prefix, e.g. fakeEnv("EXIT", "3").
func fakeEnv(kv ...string) []string {
	// A race-enabled binary sleeps a second before exiting 0 (the race
	// runtime's atexit_sleep_ms); the fake has nothing to report.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	env := []string{fakeAgentEnv + "=1", "GORACE=" + gorace}
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, "FAKE_AGENT_"+kv[i]+"="+kv[i+1])
	}
	return env
}

// readFakeRecord reads what the fake agent recorded.
func readFakeRecord(t *testing.T, path string) fakeRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the fake agent's record: %v", err)
	}
	var rec fakeRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("decode the fake agent's record: %v", err)
	}
	return rec
}

// absTestdata is a testdata path made absolute, because the fake agent runs
// in the run's workspace, not in the package directory.
func absTestdata(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
