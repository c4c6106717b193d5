package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/redact"
)

// endedLoop is a loop that has ended as res says.
type endedLoop struct{ res autopilot.LoopResult }

func (l endedLoop) Wait() autopilot.LoopResult { return l.res }
func (endedLoop) Interrupt()                   {}

// A loop's last words travel to the coordinator, which knows other
// secrets than the worker: the worker hides its own before it publishes.
func TestWorkerPublishesNoSecretOfItsOwn(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	const secret = "wk-secret-0a1b2c3d4e5f"
	run := func(context.Context, cluster.LoopJob) (cluster.LoopHandle, error) {
		return endedLoop{autopilot.LoopResult{ExitCode: 1, Reason: "fatal", Message: "the deploy refused key " + secret}}, nil
	}
	startWorker(t, workerSetup{conn: conn, ackWait: 30 * time.Second, url: url, host: "host-1", run: run,
		redactor: redact.New([]string{"WORKER_API_KEY=" + secret}, nil)})

	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	r := nextResult(t, res)
	assert.Equal(t, 1, r.ExitCode)
	assert.Equal(t, "the deploy refused key [redacted:WORKER_API_KEY]", r.Message)
}
