package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tmuxServer is a tmux server of the test's own (-L), so no user's tmux is
// touched; it is killed when the test ends. The terminal views are tested
// in the real pseudo-terminals of its detached sessions.
type tmuxServer struct {
	t      *testing.T
	bin    string
	socket string
}

var tmuxServers atomic.Int64

// newTmux starts using a server of the test's own, or skips the test
// where tmux is not installed.
func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the terminal views are tested in pseudo-terminals through tmux")
	}
	s := &tmuxServer{t: t, bin: bin, socket: fmt.Sprintf("ralph-test-%d-%d", os.Getpid(), tmuxServers.Add(1))}
	t.Cleanup(func() { _ = exec.Command(bin, "-L", s.socket, "kill-server").Run() })
	return s
}

// run runs a tmux command on the server and returns its output.
func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.bin, append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	require.NoError(s.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// session starts a detached session of width×height running shell, with
// env (NAME=value) set and a color terminal.
func (s *tmuxServer) session(name string, width, height int, env []string, shell string) *tmuxSession {
	s.t.Helper()
	args := []string{"-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-s", name,
		"-e", "TERM=xterm-256color"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.run(append(args, shell)...)
	// The window keeps the size it is given, attached or not.
	s.run("set-option", "-t", name, "window-size", "manual")
	return &tmuxSession{s: s, name: name}
}

// tmuxSession is one session's window.
type tmuxSession struct {
	s    *tmuxServer
	name string
}

// capture is the screen as text.
func (ts *tmuxSession) capture() string { return ts.s.run("capture-pane", "-p", "-t", ts.name) }

// keys sends keys, as tmux's send-keys names them (Enter, Escape, Tab, q).
func (ts *tmuxSession) keys(keys ...string) {
	ts.s.run(append([]string{"send-keys", "-t", ts.name}, keys...)...)
}

// resize makes the window width×height.
func (ts *tmuxSession) resize(width, height int) {
	ts.s.run("resize-window", "-t", ts.name, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height))
}

// waitFor captures the screen until it shows want, or fails after a
// generous deadline with the last screen.
func (ts *tmuxSession) waitFor(want string) string {
	ts.s.t.Helper()
	return waitForScreen(ts.s.t, ts.capture, want, time.Minute)
}

// waitForMatch is waitFor for a pattern.
func (ts *tmuxSession) waitForMatch(want *regexp.Regexp) string {
	ts.s.t.Helper()
	return waitForScreenMatch(ts.s.t, ts.capture, want, time.Minute)
}

// waitFor captures the screen until it shows want, or fails after
// timeout with the last screen.
func waitForScreen(t *testing.T, capture func() string, want string, timeout time.Duration) string {
	t.Helper()
	return waitForScreenMatch(t, capture, regexp.MustCompile(regexp.QuoteMeta(want)), timeout)
}

// waitForScreenMatch is waitForScreen for a pattern.
func waitForScreenMatch(t *testing.T, capture func() string, want *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := capture()
		if want.MatchString(screen) {
			return screen
		}
		select {
		case <-deadline.C:
			t.Fatalf("after %s the screen does not show %q:\n%s", timeout, want, screen)
		case <-tick.C:
		}
	}
}

func nonBlankLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	return out
}

// agentEnv is the scripted agent's environment for a process the test
// does not start itself (one in a tmux session).
func (w *workspace) agentEnv() []string {
	return scriptEnv(w.state)
}
