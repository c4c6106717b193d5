package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
// to handle until ctx ends, and then returns ctx's error once every
// handle it started has returned; any other message is dropped and
// reported to opts.Invalid. The results of one task are handed over one at
// a time, in the order published; those of different tasks at once (up to
// inFlight), so a result that waits for its events holds no other task's.
// A result is acknowledged once handle returns nil; when it returns an
// error, or the coordinator stops before it returns, the result is
// delivered again (to this coordinator after a short delay, or to the next
// one after it restarts). handle should therefore record a result before
// it returns, and be idempotent.
func Results(ctx context.Context, js jetstream.JetStream, opts ConsumeOptions, handle func(context.Context, Result) error) error {
	return consume(ctx, js, opts, ResultsStream, jetstream.ConsumerConfig{
		Durable:       CoordinatorConsumer,
		Description:   "ralph autopilot coordinator: results to merge",
		FilterSubject: resultPrefix + ">",
	}, handle)
}

// EventsOf hands each new batch of the workers' loops' events to handle,
// as Results does results: a task's in the order published, one at a
// time, different tasks' at once, each acknowledged once
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
	l := newLanes(inFlight)
	// Serve's caller may remove what the handlers write to once this
	// returns: none is left running.
	defer l.wait()
	for {
		if err := l.reserve(ctx); err != nil {
			return err
		}
		msg, err := next(ctx, cons)
		if err != nil {
			l.unreserve()
			if ctx.Err() != nil {
				// Stopped while fetching (a handler may have been what
				// stopped it, closing the connection on its way).
				return ctx.Err()
			}
			return err
		}
		v, err := decode[T, PT](opts.Trust, msg)
		if err != nil {
			if opts.Invalid != nil {
				opts.Invalid(msg.Subject(), err)
			}
			_ = msg.Term()
			l.unreserve()
			continue
		}
		// The subject names the task: its messages keep their order.
		l.run(msg.Subject(), func() { handleOne(ctx, msg, v, handle) })
	}
}

// inFlight bounds the messages a consumer has handed to its handler and
// not yet seen it return: enough for every slot of a large cluster to
// end at once, well below the servers' limit of unacknowledged messages
// (1,000 by default), past which they would hand out nothing more.
const inFlight = 64

// decode is msg's value, once its signature is a trusted key's and it is
// valid.
func decode[T any, PT interface {
	*T
	Validate() error
}](trust *Keyring, msg jetstream.Msg) (T, error) {
	var v T
	_, err := trust.verify(msg.Subject(), msg.Data(), msg.Headers())
	if err == nil {
		err = json.Unmarshal(msg.Data(), &v)
	}
	if err == nil {
		err = PT(&v).Validate()
	}
	return v, err
}

// handleOne hands v to handle and acknowledges msg when it is done with;
// once ctx ended, a message waiting its turn is handed back unhandled.
func handleOne[T any](ctx context.Context, msg jetstream.Msg, v T, handle func(context.Context, T) error) {
	if ctx.Err() != nil {
		_ = msg.Nak()
		return
	}
	if err := handle(ctx, v); err != nil {
		if ctx.Err() == nil {
			_ = msg.NakWithDelay(time.Second)
		}
		return
	}
	// Should the acknowledgement be lost, the message comes again;
	// handle is idempotent.
	_ = ackSync(ctx, msg)
}

// lanes run work in one goroutine per key: the work of one key in the
// order given, one at a time, different keys' at once; at most n pieces of
// work wait or run at once.
type lanes struct {
	slots chan struct{}
	wg    sync.WaitGroup

	mu sync.Mutex
	// queued is each busy key's work not yet started; a key is in it
	// while a goroutine runs its work.
	queued map[string][]func()
}

func newLanes(n int) *lanes {
	return &lanes{slots: make(chan struct{}, n), queued: map[string][]func(){}}
}

// reserve waits for room for one more piece of work, or until ctx ends.
func (l *lanes) reserve(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unreserve gives back a room reserve took and run was not given.
func (l *lanes) unreserve() { <-l.slots }

// run runs fn after key's earlier work, in the room reserve took.
func (l *lanes) run(key string, fn func()) {
	l.mu.Lock()
	q, busy := l.queued[key]
	l.queued[key] = append(q, fn)
	l.mu.Unlock()
	if !busy {
		l.wg.Go(func() { l.drain(key) })
	}
}

// drain runs key's work until none is left.
func (l *lanes) drain(key string) {
	for {
		l.mu.Lock()
		q := l.queued[key]
		if len(q) == 0 {
			delete(l.queued, key)
			l.mu.Unlock()
			return
		}
		fn := q[0]
		l.queued[key] = q[1:]
		l.mu.Unlock()
		fn()
		l.unreserve()
	}
}

// wait returns once all the work given to run has run.
func (l *lanes) wait() { l.wg.Wait() }

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
