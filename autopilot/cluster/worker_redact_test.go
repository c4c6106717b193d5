package cluster_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// endedLoop is a loop that has ended as res says.
type endedLoop struct{ res autopilot.LoopResult }

func (l endedLoop) Wait() autopilot.LoopResult { return l.res }
func (endedLoop) Stop(runfiles.StopMode)       {}

// workerSecret is a secret of the worker's that the coordinator does not
// know, so that it could not hide it.
const workerSecret = "wk-secret-0a1b2c3d4e5f"

// leakingLoop writes an event log whose lines, appended by the agent by
// hand, hold the worker's secret as it is and in base64, then ends with
// the secret in its last words.
func leakingLoop(_ context.Context, job cluster.WorkerJob) (cluster.WorkerLoop, error) {
	dir := filepath.Join(job.Dir, ".ralph")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "current-events"), []byte(".ralph/events-20260101-000000.jsonl\n"), 0o644); err != nil {
		return nil, err
	}
	lines := []string{
		`{"ts":"2026-01-01T00:00:00Z","topic":"loop.started","payload":null,"source":"ralph"}`,
		`{"topic":"note","payload":"the key is ` + workerSecret + `","source":"agent"}`,
		`{"topic":"note","payload":"basic ` + base64.StdEncoding.EncodeToString([]byte(workerSecret)) + `","source":"agent"}`,
		`not JSON: ` + workerSecret,
		`{"ts":"2026-01-01T00:01:00Z","topic":"loop.terminate","payload":{"reason":"fatal"},"source":"ralph"}`,
	}
	err := os.WriteFile(filepath.Join(dir, "events-20260101-000000.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if err != nil {
		return nil, err
	}
	return endedLoop{autopilot.LoopResult{ExitCode: 1, Reason: "fatal", Message: "the deploy refused key " + workerSecret}}, nil
}

// A loop's last words and its event log travel to the coordinator, which
// knows other secrets than the worker: the worker hides its own in the
// result, in each line it forwards (the copy's offsets are its own, each
// batch where the last ended) and in what it logs.
func TestWorkerSendsNoSecretOfItsOwn(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	evs := followEvents(t, conn)
	logs := newLogLines()
	// Batches of one or two lines, so that the copy is made of several.
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", run: leakingLoop,
		batch: 120, logs: logs, redactor: redact.New([]string{"WORKER_API_KEY=" + workerSecret}, nil)})

	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	r := nextResult(t, res)
	assert.Equal(t, 1, r.ExitCode)
	assert.Equal(t, "the deploy refused key [redacted:WORKER_API_KEY]", r.Message)

	want := strings.Join([]string{
		`{"ts":"2026-01-01T00:00:00Z","topic":"loop.started","payload":null,"source":"ralph"}`,
		`{"topic":"note","payload":"the key is [redacted:WORKER_API_KEY]","source":"agent"}`,
		`{"topic":"note","payload":"basic [redacted:WORKER_API_KEY]","source":"agent"}`,
		`not JSON: [redacted:WORKER_API_KEY]`,
		`{"ts":"2026-01-01T00:01:00Z","topic":"loop.terminate","payload":{"reason":"fatal"},"source":"ralph"}`,
	}, "\n") + "\n"
	evs.waitFor(t, "t-1", []byte(want))
	evs.mu.Lock()
	var off int64
	assert.Greater(t, len(evs.batches["t-1"]), 2)
	for _, b := range evs.batches["t-1"] {
		assert.Equal(t, off, b.Offset, "batches in order, each where the last ended")
		assert.LessOrEqual(t, len(b.Lines), 120)
		off += int64(len(b.Lines))
	}
	evs.mu.Unlock()

	logs.mu.Lock()
	defer logs.mu.Unlock()
	require.NotEmpty(t, logs.lines)
	for _, line := range logs.lines {
		assert.NotContains(t, line, workerSecret)
	}
}
