package cluster

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// PublishUncheckedTask publishes t signed as PublishTask does, without its
// validation: a coordinator of another build, or one whose key was taken,
// could send it, and a worker must refuse it itself.
func PublishUncheckedTask(ctx context.Context, js jetstream.JetStream, s *Signer, t Task) error {
	return publishJSON(ctx, js, s, TaskSubject(t.ID), msgID(t.Run, t.ID, t.Attempt), t)
}
