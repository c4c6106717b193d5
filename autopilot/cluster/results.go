package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ResultsOptions configure the coordinator's consumer of results.
type ResultsOptions struct {
	// AckWait is how long a result handed to the handler stays the
	// coordinator's before it is delivered again; DefaultAckWait if zero.
	AckWait time.Duration
	// Invalid, when set, is told of a message that is not a valid result;
	// such a message is acknowledged and dropped.
	Invalid func(subject string, err error)
}

// Results hands each new result to handle, one at a time, until ctx ends,
// and then returns ctx's error. A result is acknowledged once handle
// returns nil; when it returns an error, or the coordinator stops before it
// returns, the result is delivered again (to this coordinator after a
// short delay, or to the next one after it restarts). handle should
// therefore record a result before it returns, and be idempotent.
func Results(ctx context.Context, js jetstream.JetStream, opts ResultsOptions, handle func(context.Context, Result) error) error {
	if opts.AckWait < 0 {
		return fmt.Errorf("ack wait %s is negative", opts.AckWait)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{
		Durable:       CoordinatorConsumer,
		Description:   "ralph autopilot coordinator: results to merge",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       orDefault(opts.AckWait, DefaultAckWait),
		MaxDeliver:    -1,
		FilterSubject: resultPrefix + ">",
	})
	if err != nil {
		return fmt.Errorf("consumer %s on %s: %w", CoordinatorConsumer, ResultsStream, err)
	}
	for {
		msg, err := next(ctx, cons)
		if err != nil {
			return err
		}
		var r Result
		if err := json.Unmarshal(msg.Data(), &r); err == nil {
			err = r.Validate()
		}
		if err != nil {
			if opts.Invalid != nil {
				opts.Invalid(msg.Subject(), err)
			}
			_ = msg.Term()
			continue
		}
		if err := handle(ctx, r); err != nil {
			if ctx.Err() == nil {
				_ = msg.NakWithDelay(time.Second)
			}
			continue
		}
		// Should the acknowledgement be lost, the result comes again;
		// handle is idempotent.
		_ = ackSync(ctx, msg)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
