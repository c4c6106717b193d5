package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/shell"
	"github.com/ralph-loop/ralph/internal/tail"
)

// OutputLimit bounds the tail of a hook's output kept in hook.ran.
const OutputLimit = 2048

// killGrace is what a hook's group gets between SIGTERM, at its time
// limit, and SIGKILL.
const killGrace = 2 * time.Second

// pipeGrace bounds reading what a hook printed once its group is gone:
// a process that escaped the group may still hold the pipe.
const pipeGrace = 500 * time.Millisecond

// Trigger is the event a hook fires on, and where it fires.
type Trigger struct {
	Event  events.Event
	Offset int64 // the event's line in its log
	// Workspace is the directory a command runs in; RunID and EventsFile
	// say which run and log the event belongs to.
	Workspace  string
	RunID      string
	EventsFile string
}

// Result is how one run of a hook ended: the payload of hook.ran.
type Result struct {
	Hook   string `json:"hook"`
	Offset int64  `json:"offset"`
	Topic  string `json:"topic"`
	// ExitCode is a command's exit status (-1 when a signal ended it or it
	// did not start); Status a post's HTTP status (0 when none came).
	ExitCode   *int   `json:"exit_code,omitempty"`
	Status     int    `json:"http_status,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Output     string `json:"output,omitempty"`
	Error      string `json:"error,omitempty"`
	// Interrupted: ralph died while the hook ran; it is not run again.
	Interrupted bool `json:"interrupted,omitempty"`
	// Answered is the id of the question the hook answered.
	Answered string `json:"answered,omitempty"`
}

// Failed reports whether the run counts as a failure.
func (r Result) Failed() bool { return r.Error != "" }

// startedRecord is the payload of hook.started.
type startedRecord struct {
	Hook   string `json:"hook"`
	Offset int64  `json:"offset"`
	Topic  string `json:"topic"`
}

// Fire runs the hook once for t and says how it went. It returns within
// the hook's time limit (and a kill grace): a command's whole process
// group is killed then, a post abandoned.
func (h Hook) Fire(ctx context.Context, t Trigger) Result {
	ctx, cancel := context.WithTimeout(ctx, h.timeout())
	defer cancel()
	start := time.Now()
	var res Result
	if h.Post != "" {
		res = h.post(ctx, t)
	} else {
		res = h.command(ctx, t)
	}
	res.Hook, res.Offset, res.Topic = h.Name, t.Offset, t.Event.Topic
	res.DurationMS = time.Since(start).Milliseconds()
	if res.TimedOut {
		res.Error = fmt.Sprintf("timed out after %s", h.timeout())
	}
	return res
}

func (h Hook) command(ctx context.Context, t Trigger) Result {
	line, err := events.EncodeLine(t.Event)
	if err != nil {
		return Result{Error: err.Error()}
	}
	cmd, err := shell.Command("hook "+h.Name, h.Run)
	if err != nil {
		return Result{ExitCode: intPtr(-1), Error: err.Error()}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Result{Error: fmt.Sprintf("create output pipe: %v", err)}
	}
	defer r.Close()
	cmd.Dir = t.Workspace
	cmd.Env = slices.Concat(os.Environ(), h.env(t))
	cmd.Stdin = bytes.NewReader(line)
	cmd.Stdout, cmd.Stderr = w, w
	g, err := procgroup.Start(cmd, killGrace)
	_ = w.Close()
	if err != nil {
		return Result{ExitCode: intPtr(-1), Error: fmt.Sprintf("start: %v", err)}
	}
	out := tail.New(OutputLimit)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(out, r)
	}()
	stopped, waitErr := g.Wait(ctx)
	leftover := g.EnsureGone(nil)
	_ = r.SetReadDeadline(time.Now().Add(pipeGrace))
	<-drained

	res := Result{Output: out.String()}
	res.ExitCode, res.Error = exitOf(waitErr)
	switch {
	case stopped && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
	case stopped:
		res.Error = "stopped: " + context.Cause(ctx).Error()
	case leftover != nil && res.Error == "":
		res.Error = leftover.Error()
	}
	return res
}

// exitOf reads the exit status, and the failure it means, out of Wait's
// error.
func exitOf(waitErr error) (*int, string) {
	if waitErr == nil {
		return intPtr(0), ""
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return intPtr(-1), waitErr.Error()
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return intPtr(-1), "killed by " + ws.Signal().String()
	}
	return intPtr(ee.ExitCode()), fmt.Sprintf("exit status %d", ee.ExitCode())
}

func intPtr(n int) *int { return &n }

// env is what a command hook finds in its environment besides ralph's.
func (h Hook) env(t Trigger) []string {
	var p struct {
		Iteration int    `json:"iteration"`
		Hat       string `json:"hat"`
		Task      string `json:"task"`
	}
	_ = json.Unmarshal(t.Event.Payload, &p)
	iteration, hat := cmp(t.Event.Iteration, p.Iteration), t.Event.Hat
	if hat == "" {
		hat = p.Hat
	}
	env := []string{
		"RALPH_HOOK=" + h.Name,
		"RALPH_EVENT_TOPIC=" + t.Event.Topic,
		"RALPH_EVENT_OFFSET=" + strconv.FormatInt(t.Offset, 10),
		"RALPH_RUN_ID=" + t.RunID,
		"RALPH_WORKSPACE=" + t.Workspace,
		"RALPH_EVENTS_FILE=" + t.EventsFile,
		"RALPH_ITERATION=",
		"RALPH_HAT=" + hat,
		"RALPH_TASK=" + p.Task,
	}
	if iteration > 0 {
		env[6] += strconv.Itoa(iteration)
	}
	return env
}

func cmp(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// post sends the event line as JSON.
func (h Hook) post(ctx context.Context, t Trigger) Result {
	line, err := events.EncodeLine(t.Event)
	if err != nil {
		return Result{Error: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.Post, bytes.NewReader(line))
	if err != nil {
		return Result{Error: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ralph")
	req.Header.Set("X-Ralph-Hook", h.Name)
	req.Header.Set("X-Ralph-Event-Topic", t.Event.Topic)
	req.Header.Set("X-Ralph-Event-Offset", strconv.FormatInt(t.Offset, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Result{TimedOut: true}
		}
		return Result{Error: err.Error()}
	}
	defer resp.Body.Close()
	out := tail.New(OutputLimit)
	_, _ = io.Copy(out, io.LimitReader(resp.Body, 1<<20))
	res := Result{Status: resp.StatusCode, Output: out.String()}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		res.Error = "HTTP " + resp.Status
	}
	return res
}

// answerIn finds {"answer": "…"} on a line of a hook's output: the last
// such line wins.
func answerIn(output string) (string, bool) {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var a struct {
			Answer *string `json:"answer"`
		}
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &a) == nil && a.Answer != nil {
			return *a.Answer, true
		}
	}
	return "", false
}
