package engine

// State is where the loop is. It is written into state.json, so a reader of
// the checkpoint can tell what the run was doing.
type State string

const (
	StateStarting    State = "starting"
	StateSettling    State = "settling"
	StateChecking    State = "checking"
	StateSelecting   State = "selecting"
	StateRunning     State = "running"
	StateCollecting  State = "collecting"
	StateWaiting     State = "waiting"
	StateTerminating State = "terminating"
	StateDone        State = "done"
)

func (s State) String() string { return string(s) }

// IsTerminal reports whether the loop has ended.
func (s State) IsTerminal() bool { return s == StateDone }
