package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultAckWait is how long a task's claim lasts without InProgress
// before the task goes to another worker, unless the workers' consumer was
// created with another.
const DefaultAckWait = 60 * time.Second

// ClaimerOptions configure the workers' consumer.
type ClaimerOptions struct {
	// AckWait, when not zero, sets how long a claim lasts without
	// InProgress. It is the consumer's setting, shared by all workers: zero
	// keeps what the consumer has (DefaultAckWait for a new one), which is
	// what workers should pass unless they all agree on another.
	AckWait time.Duration
	// Trust are the coordinators' keys whose tasks this worker runs;
	// required. A task signed by another key is claimed with Untrusted
	// set, for the worker to hand back (another worker may trust it).
	Trust *Keyring
	// Invalid, when set, is told of a message that is not a task at all
	// (not JSON of one) or that is not signed, or whose signature does not
	// verify; such a message is removed from the queue, since no worker
	// should run it.
	Invalid func(subject string, err error)
}

// Claimer takes tasks off the queue for one worker process; its slots may
// share it.
type Claimer struct {
	js      jetstream.JetStream
	cons    jetstream.Consumer
	ackWait time.Duration
	trust   *Keyring
	invalid func(string, error)
}

// NewClaimer binds to the workers' shared consumer, creating it if there is
// none. The streams must exist (EnsureStreams).
func NewClaimer(ctx context.Context, js jetstream.JetStream, opts ClaimerOptions) (*Claimer, error) {
	if opts.AckWait < 0 {
		return nil, fmt.Errorf("ack wait %s is negative", opts.AckWait)
	}
	if opts.Trust.Len() == 0 {
		return nil, errors.New("no trusted coordinator key: a worker runs only tasks signed by a coordinator it trusts")
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       WorkersConsumer,
		Description:   "ralph workers: claims on tasks",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       opts.AckWait,
		MaxDeliver:    -1,
		FilterSubject: taskPrefix + ">",
	}
	var cons jetstream.Consumer
	var err error
	if opts.AckWait == 0 {
		cons, err = js.Consumer(ctx, TasksStream, WorkersConsumer)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			cfg.AckWait = DefaultAckWait
			cons, err = js.CreateConsumer(ctx, TasksStream, cfg)
			if errors.Is(err, jetstream.ErrConsumerExists) {
				// Another worker created it meanwhile, perhaps with another AckWait.
				cons, err = js.Consumer(ctx, TasksStream, WorkersConsumer)
			}
		}
	} else {
		cons, err = js.CreateOrUpdateConsumer(ctx, TasksStream, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s on %s: %w", WorkersConsumer, TasksStream, err)
	}
	return &Claimer{js: js, cons: cons, ackWait: cons.CachedInfo().Config.AckWait, trust: opts.Trust, invalid: opts.Invalid}, nil
}

// AckWait is how long a claim lasts without InProgress. Call InProgress
// well within it, say every third of it.
func (c *Claimer) AckWait() time.Duration { return c.ackWait }

// Claim waits for a task and claims it. It returns ctx's error when ctx
// ends first; a task the servers offered meanwhile is handed back.
//
// A message that is not signed, or whose signature by a trusted key does
// not verify, is removed from the queue and reported to Invalid, never
// returned. One signed by a key this worker does not trust is returned
// with Untrusted set: it is not this worker's to run, but may be
// another's. The task is otherwise as the coordinator sent it: the worker
// validates it (Validate, its allow list, the config) and reports a task
// it refuses as a Result.
func (c *Claimer) Claim(ctx context.Context) (*Claim, error) {
	for {
		msg, err := next(ctx, c.cons)
		if err != nil {
			return nil, err
		}
		signer, err := c.trust.verify(msg.Subject(), msg.Data(), msg.Headers())
		var untrusted *UntrustedError
		if err != nil && !errors.As(err, &untrusted) {
			c.drop(ctx, msg, err)
			continue
		}
		var t Task
		if err := json.Unmarshal(msg.Data(), &t); err != nil {
			c.drop(ctx, msg, err)
			continue
		}
		claim := &Claim{Task: t, Delivered: 1, Signer: signer, msg: msg, nc: c.js.Conn()}
		if untrusted != nil {
			claim.Untrusted, claim.Signer = untrusted, untrusted.Key
		}
		if md, err := msg.Metadata(); err == nil {
			claim.Delivered, claim.Sequence = int(md.NumDelivered), md.Sequence.Stream
		}
		return claim, nil
	}
}

// drop removes a message no worker should run from the queue and reports
// it.
func (c *Claimer) drop(ctx context.Context, msg jetstream.Msg, why error) {
	_ = msg.Term()
	_ = flush(ctx, c.js.Conn())
	if c.invalid != nil {
		c.invalid(msg.Subject(), why)
	}
}

// Claim is a worker's hold on one task.
type Claim struct {
	Task Task
	// Delivered counts the deliveries of the task's message, this one
	// included: more than 1 when another worker held it before.
	Delivered int
	// Sequence is the message's sequence in RALPH_TASKS: the same for
	// each delivery of one message, another for the same task sent again
	// as a new message.
	Sequence uint64
	// Signer is the key that signed the task.
	Signer string
	// Untrusted, when set, says the task is signed by a key this worker
	// does not trust; it must not run it.
	Untrusted *UntrustedError

	msg jetstream.Msg
	nc  *nats.Conn
}

// InProgress keeps the claim alive for another AckWait. It returns once
// the server has the request, or with an error when it cannot be sent
// (the connection is down); keep calling it on the ticker regardless.
func (c *Claim) InProgress(ctx context.Context) error {
	if err := c.msg.InProgress(); err != nil {
		return fmt.Errorf("task %s in progress: %w", c.Task.ID, err)
	}
	if err := flush(ctx, c.nc); err != nil {
		return fmt.Errorf("task %s in progress: %w", c.Task.ID, err)
	}
	return nil
}

// Done ends the claim and removes the task from the queue, once its result
// is published. It returns once the server confirms, or with an error if
// no server did after a few tries; the task then comes again after the
// AckWait, and its result, published again, is stored once.
func (c *Claim) Done(ctx context.Context) error {
	if err := ackSync(ctx, c.msg); err != nil {
		return fmt.Errorf("task %s done: %w", c.Task.ID, err)
	}
	return nil
}

// Release hands the task back at once, for another worker (or this one)
// to take.
func (c *Claim) Release(ctx context.Context) error {
	if err := c.msg.Nak(); err != nil {
		return fmt.Errorf("handing back task %s: %w", c.Task.ID, err)
	}
	if err := flush(ctx, c.nc); err != nil {
		return fmt.Errorf("handing back task %s: %w", c.Task.ID, err)
	}
	return nil
}

// Drop removes the task from the queue without a result: for a message
// no worker should run.
func (c *Claim) Drop(ctx context.Context) error {
	if err := c.msg.Term(); err != nil {
		return fmt.Errorf("dropping task %s: %w", c.Task.ID, err)
	}
	if err := flush(ctx, c.nc); err != nil {
		return fmt.Errorf("dropping task %s: %w", c.Task.ID, err)
	}
	return nil
}

// HandBack hands the task back for another worker, which may take it
// once delay has passed: for a task this worker will not run, so that the
// others come first.
func (c *Claim) HandBack(ctx context.Context, delay time.Duration) error {
	if err := c.msg.NakWithDelay(delay); err != nil {
		return fmt.Errorf("handing back task %s: %w", c.Task.ID, err)
	}
	if err := flush(ctx, c.nc); err != nil {
		return fmt.Errorf("handing back task %s: %w", c.Task.ID, err)
	}
	return nil
}

// flush waits until the server has what was sent, for one try: a server
// that went away meanwhile never answers.
func flush(ctx context.Context, nc *nats.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, publishTry)
	defer cancel()
	return nc.FlushWithContext(ctx)
}

// ackTries bounds how often ackSync asks before it gives up.
const ackTries = 4

// ackSync acknowledges msg and waits for the server to confirm. An
// acknowledgement sent just before its server went away is never
// confirmed; it is sent again, a bounded number of times, since a message
// whose delivery has expired may never be confirmed at all.
func ackSync(ctx context.Context, msg jetstream.Msg) error {
	var err error
	for range ackTries {
		tctx, cancel := context.WithTimeout(ctx, publishTry)
		err = msg.DoubleAck(tctx)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
			return nil
		}
		if ctx.Err() != nil || !retryable(err) {
			break
		}
		if !sleep(ctx, 100*time.Millisecond) {
			break
		}
	}
	return err
}

// fetchWait is how long one pull request waits at the server for a
// message. Short enough that a pull request lost with its server is
// replaced soon.
const fetchWait = 5 * time.Second

// next fetches one message of cons, waiting until there is one or ctx
// ends, through lost servers and leader elections. A message that arrives
// after ctx ended is handed back at once rather than left to time out.
func next(ctx context.Context, cons jetstream.Consumer) (jetstream.Msg, error) {
	wait := 100 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(fetchWait))
		if err == nil {
			select {
			case msg, ok := <-batch.Messages():
				if ok {
					return msg, nil
				}
				err = batch.Error()
			case <-ctx.Done():
				go func() {
					for msg := range batch.Messages() {
						_ = msg.Nak()
					}
				}()
				return nil, ctx.Err()
			}
		}
		if err == nil {
			wait = 100 * time.Millisecond
			continue // no message within fetchWait
		}
		if !retryableFetch(err) {
			return nil, err
		}
		if !sleep(ctx, wait) {
			return nil, ctx.Err()
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func retryableFetch(err error) bool {
	switch {
	case errors.Is(err, jetstream.ErrConsumerDeleted),
		errors.Is(err, jetstream.ErrConsumerNotFound):
		return false
	}
	return retryable(err)
}
