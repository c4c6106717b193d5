package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Streams, subjects and consumers; see the package documentation.
const (
	TasksStream   = "RALPH_TASKS"
	ResultsStream = "RALPH_RESULTS"
	EventsStream  = "RALPH_EVENTS"

	taskPrefix   = "ralph.task."
	resultPrefix = "ralph.result."
	eventsPrefix = "ralph.events."

	// WorkersConsumer is the durable consumer on RALPH_TASKS that all
	// workers share.
	WorkersConsumer = "ralph-workers"
	// CoordinatorConsumer is the coordinator's durable consumer on
	// RALPH_RESULTS.
	CoordinatorConsumer = "ralph-coordinator"

	// DedupWindow is how long the streams remember a message's id: the
	// same message published again within it is stored once.
	DedupWindow = 24 * time.Hour
	// EventsMaxAge is how long RALPH_EVENTS keeps a batch; the coordinator
	// keeps its own copy.
	EventsMaxAge = 7 * 24 * time.Hour
)

// TaskSubject is the subject task id is published on.
func TaskSubject(id string) string { return taskPrefix + id }

// ResultSubject is the subject task id's results are published on.
func ResultSubject(id string) string { return resultPrefix + id }

// EventsSubject is the subject task id's event batches are published on.
func EventsSubject(id string) string { return eventsPrefix + id }

// EnsureStreams creates ralph's streams, or updates them to the wanted
// configuration, with file storage replicated on replicas servers (1 for a
// single server; 3 keeps every message through the loss of one server of
// three). It is idempotent: coordinators and workers may all call it.
//
// A cluster that has just formed, or several workers starting at once,
// may keep a request waiting past its timeout: it is tried again for up to
// ensureTime, then given up with the last error.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if replicas < 1 {
		return fmt.Errorf("replicas is %d; at least 1", replicas)
	}
	ctx, cancel := context.WithTimeout(ctx, ensureTime)
	defer cancel()
	for _, cfg := range streamConfigs(replicas) {
		if err := ensureStream(ctx, js, cfg); err != nil {
			return fmt.Errorf("stream %s with %d replicas: %w", cfg.Name, replicas, err)
		}
	}
	return nil
}

// ensureTime bounds EnsureStreams' tries.
const ensureTime = time.Minute

func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	wait := 200 * time.Millisecond
	for {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := createOrUpdate(tctx, js, cfg)
		cancel()
		if err == nil || !retryable(err) {
			return err
		}
		if !sleep(ctx, wait) {
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// createOrUpdate makes the stream as cfg says, asking the servers to
// change it only when it differs: every coordinator and worker calls this
// at start, and a stream updated while another process makes a consumer on
// it is a race inside the NATS server (seen under its race detector).
func createOrUpdate(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err = js.CreateStream(ctx, cfg); !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return err
		}
		// Another process made it first; it may have made it otherwise.
		s, err = js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return err
	}
	if sameStream(s.CachedInfo().Config, cfg) {
		return nil
	}
	_, err = js.UpdateStream(ctx, cfg)
	return err
}

// sameStream reports whether have is want in every setting ralph sets; the
// servers fill in the rest.
func sameStream(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention && have.Storage == want.Storage && have.Replicas == want.Replicas &&
		have.Duplicates == want.Duplicates && have.MaxAge == want.MaxAge
}

func streamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{{
		Name:        TasksStream,
		Description: "ralph autopilot: tasks waiting for a worker",
		Subjects:    []string{taskPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  DedupWindow,
	}, {
		Name:        ResultsStream,
		Description: "ralph autopilot: what became of each task's attempt",
		Subjects:    []string{resultPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  DedupWindow,
	}, {
		Name:        EventsStream,
		Description: "ralph autopilot: the event lines of the workers' loops",
		Subjects:    []string{eventsPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  DedupWindow,
		MaxAge:      EventsMaxAge,
	}}
}
