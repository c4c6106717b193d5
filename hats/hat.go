package hats

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
}

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
