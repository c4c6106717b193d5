package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ConsumeOptions configure the coordinator's consumers of results and
// events.
type ConsumeOptions struct {
	// AckWait is how long a message handed to the handler stays the
	// coordinator's before it is delivered again; DefaultAckWait if zero.
	AckWait time.Duration
	// Trust are the workers' keys whose results and events are taken;
	// required. A message not signed by one of them is invalid.
	Trust *Keyring
	// Invalid, when set, is told of a message that is not valid (not
	// signed by a trusted key, or not one of the stream's messages); such
	// a message is dropped (acknowledged as never to be delivered again).
	Invalid func(subject string, err error)
}

// EventsConsumer is the coordinator's durable consumer on RALPH_EVENTS.
const EventsConsumer = "ralph-coordinator-events"

// eventsAckWait caps how long a batch handed out stays unacknowledged
// before it comes again. Handling a batch is a quick append, and a batch
// lost in flight (with its server, or with a coordinator that stopped)
// holds back every later batch of its task, and the task's result with
// them, until it comes again: well within eventsWait.
const eventsAckWait = 5 * time.Second

// Results hands each new result signed by a trusted worker (opts.Trust)
// to handle, one at a time, until ctx ends, and then returns ctx's error;
// any other message is dropped and reported to opts.Invalid. A result is
// acknowledged once handle returns nil; when it returns an error, or the
// coordinator stops before it returns, the result is delivered again (to
// this coordinator after a short delay, or to the next one after it
// restarts). handle should therefore record a result before it returns,
// and be idempotent.
func Results(ctx context.Context, js jetstream.JetStream, opts ConsumeOptions, handle func(context.Context, Result) error) error {
	return consume(ctx, js, opts, ResultsStream, jetstream.ConsumerConfig{
		Durable:       CoordinatorConsumer,
		Description:   "ralph autopilot coordinator: results to merge",
		FilterSubject: resultPrefix + ">",
	}, handle)
}

// EventsOf hands each new batch of the workers' loops' events to handle,
// as Results does results: in the order published, each acknowledged once
// handle returns nil, again after an error or a restart. A batch may come
// more than once: handle appends a batch whose Offset is where its copy of
// the task's log ends and skips one it already has. A batch stays handed
// out at most 5 s (less when opts.AckWait is less).
func EventsOf(ctx context.Context, js jetstream.JetStream, opts ConsumeOptions, handle func(context.Context, Events) error) error {
	if opts.AckWait == 0 || opts.AckWait > eventsAckWait {
		opts.AckWait = eventsAckWait
	}
	return consume(ctx, js, opts, EventsStream, jetstream.ConsumerConfig{
		Durable:       EventsConsumer,
		Description:   "ralph autopilot coordinator: the workers' loops' events",
		FilterSubject: eventsPrefix + ">",
	}, handle)
}

// consume runs a durable consumer with cfg on stream, handing each valid
// message to handle.
func consume[T any, PT interface {
	*T
	Validate() error
}](ctx context.Context, js jetstream.JetStream, opts ConsumeOptions, stream string, cfg jetstream.ConsumerConfig, handle func(context.Context, T) error) error {
	if opts.AckWait < 0 {
		return fmt.Errorf("ack wait %s is negative", opts.AckWait)
	}
	if opts.Trust.Len() == 0 {
		return errors.New("no trusted worker key: a coordinator takes results only from workers it trusts")
	}
	cfg.AckPolicy = jetstream.AckExplicitPolicy
	cfg.AckWait = orDefault(opts.AckWait, DefaultAckWait)
	cfg.MaxDeliver = -1
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return fmt.Errorf("consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	for {
		msg, err := next(ctx, cons)
		if err != nil {
			return err
		}
		var v T
		_, err = opts.Trust.verify(msg.Subject(), msg.Data(), msg.Headers())
		if err == nil {
			err = json.Unmarshal(msg.Data(), &v)
		}
		if err == nil {
			err = PT(&v).Validate()
		}
		if err != nil {
			if opts.Invalid != nil {
				opts.Invalid(msg.Subject(), err)
			}
			_ = msg.Term()
			continue
		}
		if err := handle(ctx, v); err != nil {
			if ctx.Err() == nil {
				_ = msg.NakWithDelay(time.Second)
			}
			continue
		}
		// Should the acknowledgement be lost, the message comes again;
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
