package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

const (
	secretName = "TEST_API_KEY"
	secret     = "sk-test-engine-0c4b8e2d6a"
	secretMask = "[redacted:" + secretName + "]"
)

// callRecorder renders every Reporter call it gets, to search them.
type callRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *callRecorder) add(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%+v", args))
}

func (r *callRecorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.calls, "\n")
}

func (r *callRecorder) LoopStarted(run RunInfo)           { r.add(run) }
func (r *callRecorder) IterationStarted(it IterationInfo) { r.add(it) }
func (r *callRecorder) Activity(it IterationInfo, a events.Activity) {
	r.add(it, a)
}
func (r *callRecorder) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	r.add(ev.Topic, ev.PayloadText(), to, as)
}
func (r *callRecorder) EventRejected(ev events.Event, reason string) {
	r.add(ev.Topic, ev.PayloadText(), reason)
}
func (r *callRecorder) IterationFinished(it IterationInfo, res events.AgentResult) {
	r.add(it, res)
}
func (r *callRecorder) Commit(it IterationInfo, c Commit)                { r.add(it, c) }
func (r *callRecorder) RateLimited(it IterationInfo, wait time.Duration) { r.add(it, wait) }
func (r *callRecorder) Warn(msg string)                                  { r.add(msg) }
func (r *callRecorder) LoopFinished(sum Summary)                         { r.add(sum) }
func (r *callRecorder) Stuck(end runfiles.Termination, withoutProgress int) {
	r.add(end, withoutProgress)
}
func (r *callRecorder) TaskComplete(index int, text string) { r.add(index, text) }

// leakyVerifier fails every criterion with evidence that quotes the key, as
// a test suite that prints its environment would.
func leakyVerifier(_ context.Context, _ string, specs []criteria.Spec, _ criteria.Env) []criteria.Result {
	out := make([]criteria.Result, len(specs))
	for i, s := range specs {
		out[i] = criteria.Result{Spec: s, Name: "tests_pass", Evidence: "FAIL: env has " + secretName + "=" + secret}
	}
	return out
}

// The backend is faked without redaction, so each of the engine's own
// safeguards is what stands between the key and the files: tags in the
// final text, the failure message, activity, criteria evidence, and lines
// the agent wrote into the log itself.
func TestSecretsNeverReachWhatTheEngineWritesOrReports(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.MaxIterations = 3
	s.Gates = []Gate{{Topic: "build.done", Criteria: []criteria.Spec{{Type: "tests_pass"}}}}
	leak := func(what string) string { return what + " " + secret }
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph": {{
			text: "Plan. " + tagged("build.task", leak("build with")),
			raw: []string{`{"topic":"build.task","payload":"` + leak("by hand") + `"}`,
				// A topic and a target the agent made of the key.
				`{"topic":"leak.` + secret + `","target":"` + secret + `","payload":"x"}`},
			acts: []events.Activity{{Kind: events.ActivityTool, Tool: events.ToolShell, Command: leak("curl -H"), Text: leak("out")}},
		}},
		"builder": {
			{emit: []events.Event{ev("build.done", leak("done, key"))}},
			{text: leak("gave up on"), result: events.AgentResult{ExitCode: 1, Failure: events.FailureAgent,
				FailureMessage: leak("API error 401: invalid x-api-key")},
				// Still pending when the run ends, so state.json holds it.
				raw: []string{`{"topic":"build.task","payload":"` + leak("left over") + `"}`}},
		},
	}}
	rec := &callRecorder{}
	e := newTestEngine(t, dir, b, s, func(o *Options) {
		o.Verify = leakyVerifier
		o.Reporter = rec
		o.Redactor = redact.New([]string{secretName + "=" + secret}, nil)
		o.SummaryFile = func(s Summary) string { return fmt.Sprintf("%+v", s) }
	})
	out, err := e.Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonMaxIterations, out.Reason)

	agentLines := 0
	for _, r := range readLog(t, dir) {
		require.NoError(t, r.Err)
		if r.Event.Source == events.SourceRalph || r.Event.Source == events.SourceTag {
			assert.NotContains(t, string(r.Line), secret, "a line ralph wrote")
		} else if strings.Contains(string(r.Line), secret) {
			agentLines++ // written by the agent itself: ralph cannot stop that
		}
	}
	assert.Equal(t, 4, agentLines, "the test plants the key in four lines the agent writes itself")

	for _, f := range []string{runfiles.StateFile, filepath.Join(runfiles.RunsDir, out.RunID, "summary.md")} {
		data, err := os.ReadFile(filepath.Join(dir, runfiles.DirName, f))
		require.NoError(t, err)
		assert.NotContains(t, string(data), secret, f)
	}
	assert.Contains(t, readFile(t, runfiles.In(dir).State()), "left over "+secretMask, "the pending event")
	calls := rec.all()
	assert.NotContains(t, calls, secret, "what the reporter was told")
	for _, want := range []string{"build with " + secretMask, "by hand " + secretMask, "curl -H " + secretMask,
		"done, key " + secretMask, "has " + secretName + "=" + secretMask, "invalid x-api-key " + secretMask} {
		assert.Contains(t, calls, want)
	}
	for i, p := range b.prompts {
		assert.NotContains(t, p, secret, "prompt %d quotes the pending events as folded", i+1)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
