// Package scriptagent is a fake coding agent for ralph's end-to-end tests.
// cmd/ralph's tests build [Main] as the program scriptagent (cmd/scriptagent)
// and put it on PATH beside the registered ralph, and ralph runs it through
// the generic command backend like any agent CLI; what it does each time is read
// from a JSON script, so a test decides exactly which files it edits, which
// events it publishes and how it exits.
//
// # Environment
//
//	SCRIPTAGENT_SCRIPT  path of the script (required)
//	SCRIPTAGENT_STATE   directory for its counters and logs (default: the
//	                    script's directory); it records each prompt it gets
//	                    as prompt-<run>.txt and appends one line per event it
//	                    publishes to emitted.jsonl
//	RALPH_ITERATION, RALPH_HAT, RALPH_BIN, RALPH_EVENTS_FILE: set by ralph
//
// The prompt arrives as the last argument, or on stdin when there is none.
//
// # Script
//
//	{"steps": [STEP, …], "by_hat": {"builder": [STEP, …]}}
//
// The format is defined once, by the Go types of package
// internal/scriptagent/script, with which the tests write their scripts;
// keys it does not know are refused.
//
// A run uses by_hat[$RALPH_HAT] when present, indexed by how many times that
// hat has run before; otherwise steps[$RALPH_ITERATION-1]. The last step
// repeats when the list runs out. A STEP is an object with any of the keys
// below. When its conditions (when_file, when_lines) hold, ignore_sigterm
// and spawn_child take effect first, then the rest in the order listed:
//
//	write    {"path": "content"}   create or replace files
//	append   {"path": "content"}   append to files
//	replace  {"path": ["old", "new"]}  replace the first old with new in files
//	sh       "command"             run with sh -c in the working directory,
//	                               its output passing through; a non-zero
//	                               status becomes the agent's exit status
//	                               (once the rest of the step is done)
//	                               unless the step sets exit
//	commit   "message"             git add -A, then git commit -q -m message
//	                               in the working directory; nothing to
//	                               commit is not an error (with no git
//	                               identity configured it commits as
//	                               scriptagent)
//	raw      ["line", …]           appended as-is to $RALPH_EVENTS_FILE
//	emit     [{"topic", "payload", "target", "json"}]  via `$RALPH_BIN emit`
//	print_file "path"              the file's contents printed on stdout, with
//	                               the templates below expanded: a canned
//	                               stream in some CLI's own output format
//	say      "text"                printed on stdout (the final text: tags go here)
//	stderr   "text"                printed on stderr
//	sleep_ms N                     sleep before exiting (after everything else)
//	exit     N                     exit status
//	ignore_sigterm true            ignore SIGTERM (for group-kill tests)
//	spawn_child true               start a long-sleeping child in the same
//	                               process group, writing its pid to child.pid
//	when_file {"path": "text"}     run only if the file contains text; else
//	                               the step's "else" step runs
//	when_lines {"path": N}         run only if the file has at least N lines
//	else     STEP
//
// In payloads, say, stderr and print_file, {{run}} becomes the number of
// this run of the agent (1, 2, …), so every event it publishes can be told
// apart, and {{now+N}} the Unix time in seconds N seconds from now (N may be
// 0 or negative: {{now+0}}, {{now+-5}}), for reset times of rate limits.
package scriptagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/ralph-loop/ralph/internal/atomicfile"
	"github.com/ralph-loop/ralph/internal/scriptagent/script"
)

// Main is the agent's program: it reads its arguments and environment
// from the process, and ends it with os.Exit.
func Main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scriptagent:", err)
		os.Exit(97)
	}
	os.Exit(0)
}

func run() error {
	path := os.Getenv("SCRIPTAGENT_SCRIPT")
	if path == "" {
		return fmt.Errorf("SCRIPTAGENT_SCRIPT is not set")
	}
	sc, err := script.ReadFile(path)
	if err != nil {
		return err
	}
	state := os.Getenv("SCRIPTAGENT_STATE")
	if state == "" {
		state = filepath.Dir(path)
	}
	runNo := bump(filepath.Join(state, "runs.count"))
	if err := recordPrompt(state, runNo); err != nil {
		return err
	}
	st := pick(sc, state)
	for !conditionsHold(st) {
		if st.Else == nil {
			return nil
		}
		st = *st.Else
	}
	return perform(st, state, strconv.Itoa(runNo))
}

func pick(sc script.Script, state string) script.Step {
	hat := os.Getenv("RALPH_HAT")
	if steps, ok := sc.ByHat[hat]; ok && len(steps) > 0 {
		n := bump(filepath.Join(state, "hat-"+hat+".count"))
		return nth(steps, n)
	}
	n, _ := strconv.Atoi(os.Getenv("RALPH_ITERATION"))
	return nth(sc.Steps, max(n, 1))
}

func nth(steps []script.Step, n int) script.Step {
	if len(steps) == 0 {
		return script.Step{}
	}
	return steps[min(n, len(steps))-1]
}

// bump increments a counter file and returns the new value. The file is
// replaced atomically: tests kill agents at any instant, and a counter
// truncated by a kill would start again from 1 and repeat payloads that
// tests hold to be unique. A lock beside it makes the count exact when
// several agents run at once (a wave's workers).
func bump(path string) int {
	lock := flock.New(path + ".lock")
	if err := lock.Lock(); err == nil {
		defer func() { _ = lock.Unlock() }()
	}
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	n++
	_ = atomicfile.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	return n
}

func recordPrompt(state string, runNo int) error {
	prompt := ""
	if len(os.Args) > 1 {
		prompt = os.Args[len(os.Args)-1]
	} else {
		data, _ := io.ReadAll(os.Stdin)
		prompt = string(data)
	}
	return os.WriteFile(filepath.Join(state, fmt.Sprintf("prompt-%d.txt", runNo)), []byte(prompt), 0o644)
}

func conditionsHold(st script.Step) bool {
	return fileHas(st.WhenFile) && fileHasLines(st.WhenLines)
}

func fileHasLines(cond map[string]int) bool {
	for path, n := range cond {
		data, _ := os.ReadFile(path)
		if strings.Count(string(data), "\n") < n {
			return false
		}
	}
	return true
}

func fileHas(cond map[string]string) bool {
	for path, text := range cond {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), text) {
			return false
		}
	}
	return true
}

func perform(st script.Step, state, runNo string) error {
	now := time.Now()
	expand := func(s string) string { return expandTemplates(s, runNo, now) }
	if st.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	if st.SpawnChild {
		if err := spawnChild(state); err != nil {
			return err
		}
	}
	if err := writeFiles(st.Write, os.O_TRUNC); err != nil {
		return err
	}
	if err := writeFiles(st.Append, os.O_APPEND); err != nil {
		return err
	}
	if err := replaceInFiles(st.Replace); err != nil {
		return err
	}
	shStatus, err := runShell(st.Sh)
	if err != nil {
		return err
	}
	if err := commitAll(st.Commit); err != nil {
		return err
	}
	if err := appendRaw(st.Raw); err != nil {
		return err
	}
	for _, e := range st.Emit {
		e.Payload = expand(e.Payload)
		if err := publish(e, state); err != nil {
			return err
		}
	}
	if st.PrintFile != "" {
		data, err := os.ReadFile(st.PrintFile)
		if err != nil {
			return fmt.Errorf("print_file: %w", err)
		}
		fmt.Print(expand(string(data)))
	}
	if st.Say != "" {
		fmt.Println(expand(st.Say))
	}
	if st.Stderr != "" {
		fmt.Fprintln(os.Stderr, expand(st.Stderr))
	}
	time.Sleep(time.Duration(st.SleepMS) * time.Millisecond)
	if st.Exit != 0 {
		os.Exit(st.Exit)
	}
	if shStatus != 0 {
		os.Exit(shStatus)
	}
	return nil
}

// runShell runs command with sh -c in the working directory, its output
// passing through, and returns its exit status.
func runShell(command string) (int, error) {
	if command == "" {
		return 0, nil
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() < 0 {
			return 0, fmt.Errorf("sh: %w", err)
		}
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("sh: %w", err)
	}
	return 0, nil
}

// commitAll commits every change in the working directory's repository
// with message, as an agent that commits its work would; a clean tree is
// not an error. Without a git identity in the environment it commits as
// scriptagent.
func commitAll(message string) error {
	if message == "" {
		return nil
	}
	if out, err := exec.Command("git", "add", "-A").CombinedOutput(); err != nil {
		return fmt.Errorf("commit: git add: %w: %s", err, out)
	}
	if exec.Command("git", "diff", "--cached", "--quiet").Run() == nil {
		return nil // nothing staged
	}
	var args []string
	for key, fallback := range map[string]string{"user.name": "scriptagent", "user.email": "scriptagent@example.com"} {
		if exec.Command("git", "config", key).Run() != nil {
			args = append(args, "-c", key+"="+fallback)
		}
	}
	args = append(args, "commit", "-q", "-m", message)
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("commit: git commit: %w: %s", err, out)
	}
	return nil
}

// nowTemplate is {{now+N}}: Unix seconds N seconds from now.
var nowTemplate = regexp.MustCompile(`\{\{now\+(-?\d+)\}\}`)

// expandTemplates replaces {{run}} and {{now+N}} in s.
func expandTemplates(s, runNo string, now time.Time) string {
	s = strings.ReplaceAll(s, "{{run}}", runNo)
	return nowTemplate.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(nowTemplate.FindStringSubmatch(m)[1]) // digits only; out of range counts as 0
		return strconv.FormatInt(now.Unix()+int64(n), 10)
	})
}

func writeFiles(files map[string]string, mode int) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if dir := filepath.Dir(name); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|mode, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(files[name])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func replaceInFiles(edits map[string]script.Replace) error {
	for path, r := range edits {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), r.Old, r.New, 1)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func appendRaw(lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(os.Getenv("RALPH_EVENTS_FILE"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			return err
		}
	}
	return f.Close()
}

// publish runs `ralph emit` the way an agent's shell tool would, and notes
// the event so tests can check it was logged and routed exactly once.
func publish(e script.Emit, state string) error {
	args := []string{"emit", e.Topic}
	if e.Payload != "" {
		args = append(args, e.Payload)
	}
	if e.Target != "" {
		args = append(args, "--target", e.Target)
	}
	if e.JSON {
		args = append(args, "--json")
	}
	bin := os.Getenv("RALPH_BIN")
	if bin == "" {
		bin = "ralph"
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ralph emit %s: %w", e.Topic, err)
	}
	line, _ := json.Marshal(map[string]any{"topic": e.Topic, "payload": e.Payload,
		"iteration": os.Getenv("RALPH_ITERATION"), "hat": os.Getenv("RALPH_HAT")})
	f, err := os.OpenFile(filepath.Join(state, "emitted.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return err
	}
	return f.Close()
}

func spawnChild(state string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-child")
	if err := cmd.Start(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, "child.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}
