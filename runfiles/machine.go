package runfiles

// Phase is where the loop is. It is written into state.json, so a reader of
// the checkpoint can tell what the run was doing.
type Phase string

const (
	PhaseStarting   Phase = "starting"
	PhaseSettling   Phase = "settling"
	PhaseChecking   Phase = "checking"
	PhaseSelecting  Phase = "selecting"
	PhaseRunning    Phase = "running"
	PhaseCollecting Phase = "collecting"
	// PhaseWave: the iteration runs a wave's workers, then merges their
	// events into the log.
	PhaseWave    Phase = "wave"
	PhaseWaiting Phase = "waiting"
	// PhasePacing: a pacing budget's window is full; the next iteration
	// waits until enough of it has aged out.
	PhasePacing Phase = "pacing"
	// PhaseAwaitingHuman: a question an agent asked waits for a person.
	PhaseAwaitingHuman Phase = "awaiting_human"
	PhaseTerminating   Phase = "terminating"
	PhaseDone          Phase = "done"
)

func (p Phase) String() string { return string(p) }

// IsTerminal reports whether the loop has ended.
func (p Phase) IsTerminal() bool { return p == PhaseDone }
