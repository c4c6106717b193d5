package hats

import "time"

// Hat is one role the agent can wear: what wakes it (Triggers), what it may
// publish, and what it is told to do.
type Hat struct {
	ID          string // the key under hats: in ralph.yml
	Name        string
	Description string
	// Triggers are topic patterns (see events.Match) that route events to this hat.
	Triggers     []string
	Publishes    []string
	Instructions string
	// DefaultPublishes is published for the hat when the agent published nothing.
	DefaultPublishes string
	// MaxActivations bounds how often the hat may run; 0 means no bound.
	MaxActivations int
	// Concurrency above 1 makes the hat a wave hat: a wave of its trigger
	// events runs one worker per event, up to Concurrency at once.
	Concurrency int
	// Aggregate, when set, makes the hat a wave's aggregator: it handles
	// the results of a wave once every worker has one, or the time is up.
	Aggregate *Aggregate
	// Timeout bounds one wave worker of this hat; 0 leaves it to
	// [Registry.WorkerTimeout].
	Timeout time.Duration
}

// AggregateWaitForAll is the one aggregate mode: wait for every worker.
const AggregateWaitForAll = "wait_for_all"

// Aggregate is how a hat collects a wave's results.
type Aggregate struct {
	Mode string
	// Timeout is how long after a wave started its results are waited
	// for; 0 is DefaultWaveTimeout.
	Timeout time.Duration
}

// DefaultWaveTimeout bounds a wave worker when neither its hat nor an
// aggregator says otherwise, as ralph-orchestrator's does.
const DefaultWaveTimeout = 300 * time.Second

// Waves reports whether h runs a wave of its trigger events in parallel.
func (h Hat) Waves() bool { return h.Concurrency > 1 }

// CoordinatorID is the built-in hat that handles events no configured hat
// triggers on (including the starting event when no hat takes it).
const CoordinatorID = "ralph"

// ReservedResumeTopic is published by ralph itself to hand control back to
// the coordinator; no hat may trigger on it.
const ReservedResumeTopic = "task.resume"

// GuidanceTopic is what a person publishes to steer a run (`ralph guide`,
// the g key of `ralph watch`, the page's guidance box). Untargeted and
// triggering no hat, it goes to the next iteration whatever its hat (see
// [Floats]): advice waiting for the coordinator would come too late.
const GuidanceTopic = "human.guidance"
