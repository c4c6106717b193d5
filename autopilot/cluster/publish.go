package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublishTask queues t for the workers, signed by the coordinator's key.
// Its message id is its run, id and attempt, so publishing the same
// attempt again, after a coordinator restarted, queues it once.
//
// The Publish functions validate the message first, sign it, and then try
// until a server stores it or ctx ends: through lost servers, leader
// elections and a cluster not yet formed (or streams not yet created).
func PublishTask(ctx context.Context, js jetstream.JetStream, s *Signer, t Task) error {
	if err := t.Validate(); err != nil {
		return err
	}
	return publishJSON(ctx, js, s, TaskSubject(t.ID), msgID(t.Run, t.ID, t.Attempt), t)
}

// PublishResult reports r to the coordinator, signed by the worker's key.
// Its message id is its task's run, id and attempt, so a result published
// twice is stored once.
func PublishResult(ctx context.Context, js jetstream.JetStream, s *Signer, r Result) error {
	if err := r.Validate(); err != nil {
		return err
	}
	id := msgID(r.Run, r.TaskID, r.Attempt)
	if r.Refused {
		// One report per refusal, apart from the attempt's result.
		id += "/refused/" + r.Worker + "/" + strconv.Itoa(r.Delivery)
	}
	return publishJSON(ctx, js, s, ResultSubject(r.TaskID), id, r)
}

// PublishEvents sends a batch of a loop's event lines to the coordinator,
// signed by the worker's key: the coordinator copies the lines into its
// repository's .ralph/, so it takes them only from workers it trusts. Its
// message id is its task's run, id and attempt, and its offset.
func PublishEvents(ctx context.Context, js jetstream.JetStream, s *Signer, e Events) error {
	if err := e.Validate(); err != nil {
		return err
	}
	id := msgID(e.Run, e.TaskID, e.Attempt) + "/" + strconv.FormatInt(e.Offset, 10)
	return publishJSON(ctx, js, s, EventsSubject(e.TaskID), id, e)
}

// publishTry bounds one try at publishing: a message sent just before its
// server went away is never acknowledged, and is sent again.
const publishTry = 5 * time.Second

// publishJSON publishes v, signed by s, until a server acknowledges it (a
// duplicate is acknowledged too) or ctx ends. Tries after the first are
// safe because the message id makes the stream store it once.
//
// The message id ends with a digest of the signature. The streams keep the
// first message of an id and drop the others, whoever sends them; an id
// made of names alone (run, task, attempt) could be taken first by anyone
// who may publish, with a message of their own, and the real one would be
// dropped as a duplicate. Ed25519 signatures are deterministic, so the same
// message signed again has the same id, and only its signer can make it.
func publishJSON(ctx context.Context, js jetstream.JetStream, s *Signer, subject, id string, v any) error {
	if s == nil {
		return fmt.Errorf("publishing %s: no key to sign it with", subject)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	if err := s.sign(subject, data, msg.Header); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(msg.Header.Get(SignatureHeader)))
	id += "/" + hex.EncodeToString(sum[:12])
	wait := 100 * time.Millisecond
	for {
		tctx, cancel := context.WithTimeout(ctx, publishTry)
		_, err = js.PublishMsg(tctx, msg, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			return nil
		}
		if !retryable(err) {
			return fmt.Errorf("publishing %s: %w", subject, err)
		}
		if !sleep(ctx, wait) {
			return fmt.Errorf("publishing %s: %w (last try: %w)", subject, ctx.Err(), err)
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// retryable reports whether err may go away by itself: a server that went
// away, a stream or consumer electing a new leader. A closed connection, a
// refused permission or a message too large stay as they are.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrBadSubject),
		errors.Is(err, nats.ErrMaxPayload),
		errors.Is(err, nats.ErrPermissionViolation),
		errors.Is(err, nats.ErrAuthorization):
		return false
	case errors.As(err, &apiErr):
		// 503 and 504: JetStream is not available or did not answer yet.
		return apiErr.Code >= 500
	}
	return true
}

// sleep waits d, or less if ctx ends, and reports whether ctx is still
// alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
