package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// stateVersion is the version of chain.json this ralph writes. Version 2
// added BudgetChanges; a version 1 file reads as a chain whose budget
// never changed.
const stateVersion = 2

// readsVersion reports whether this ralph reads chain.json version v.
func readsVersion(v int) bool { return v == 1 || v == stateVersion }

// Status is where a chain, or one of its steps, is.
type Status string

const (
	// Running: a step is under way or next; a chain cut off while
	// running resumes here.
	Running Status = "running"
	// Completed: every step completed (a step: its loop completed).
	Completed Status = "completed"
	// Stopped: the chain ended before its last step completed: a step
	// that did not complete, or a budget spent.
	Stopped Status = "stopped"
)

// StepRecord is what a step of the chain did.
type StepRecord struct {
	N         int       `json:"n"`
	Label     string    `json:"label"`
	Status    Status    `json:"status"`
	RunID     string    `json:"run_id,omitempty"`
	ExitCode  int       `json:"exit_code"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	Spent     Spent     `json:"spent"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Resumes counts the times the step's loop was resumed after the
	// chain was cut off.
	Resumes int `json:"resumes,omitempty"`
}

// State is a chain run: its plan and how far it got.
type State struct {
	ID        string       `json:"id"`
	Plan      Plan         `json:"plan"`
	Status    Status       `json:"status"`
	Current   int          `json:"current"` // the step under way or next, from 1
	ExitCode  int          `json:"exit_code"`
	Message   string       `json:"message,omitempty"`
	Steps     []StepRecord `json:"steps"`
	StartedAt time.Time    `json:"started_at"`
	UpdatedAt time.Time    `json:"updated_at"`
	// BudgetChanges are the budgets a resume gave the chain in place of
	// the one it had (Plan.Budget is the latest), oldest first.
	BudgetChanges []BudgetChange `json:"budget_changes,omitempty"`
}

// BudgetChange is a budget that a resume gave the chain.
type BudgetChange struct {
	At   time.Time `json:"at"`
	From Budget    `json:"from"`
	To   Budget    `json:"to"`
}

type wireState struct {
	Version int `json:"version"`
	*State
}

// NewState is a chain about to run plan, its first step next.
func NewState(id string, plan Plan, now time.Time) *State {
	return &State{ID: id, Plan: plan, Status: Running, Current: 1, StartedAt: now, UpdatedAt: now}
}

// Record is step n's record, nil before the step started.
func (s *State) Record(n int) *StepRecord {
	for i := range s.Steps {
		if s.Steps[i].N == n {
			return &s.Steps[i]
		}
	}
	return nil
}

// SpentBefore is what the steps before step n spent.
func (s *State) SpentBefore(n int) Spent {
	var total Spent
	for _, r := range s.Steps {
		if r.N < n {
			total = total.Add(r.Spent)
		}
	}
	return total
}

// Spent is what every step spent, the one under way as of its last record.
func (s *State) Spent() Spent { return s.SpentBefore(len(s.Plan.Steps) + 1) }

// Ended says whether the chain ran its course (completed or stopped).
func (s *State) Ended() bool { return s.Status != Running }

// Where is the chain and its current step in a few words, as the views
// show it: "chain review-then-fix: step 2/3 (tdd)".
func (s *State) Where() string {
	name := s.Plan.Name
	if name == "" {
		name = s.ID
	}
	n := min(max(s.Current, 1), len(s.Plan.Steps))
	if n == 0 {
		return "chain " + name
	}
	where := fmt.Sprintf("chain %s: step %d/%d (%s)", name, n, len(s.Plan.Steps), s.Plan.Steps[n-1].Label())
	if s.Ended() {
		where += ", " + string(s.Status)
	}
	return where
}

// ErrNoChain says a workspace has no chain run (or none of that id).
var ErrNoChain = errors.New("no chain run")

// CorruptStateError is a chain.json that cannot be used.
type CorruptStateError struct {
	Path string
	Err  error
}

func (e *CorruptStateError) Error() string {
	return fmt.Sprintf("corrupt chain state %s: %v", e.Path, e.Err)
}

func (e *CorruptStateError) Unwrap() error { return e.Err }

// Save writes the chain's state atomically, and names it the workspace's
// current chain. The caller holds the chain lock.
func Save(d runfiles.Dir, s *State, now time.Time) error {
	s.UpdatedAt = now
	data, err := json.MarshalIndent(wireState{Version: stateVersion, State: s}, "", "  ")
	if err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomic(d.Path(), d.ChainState(s.ID), append(data, '\n')); err != nil {
		return fmt.Errorf("write chain state: %w", err)
	}
	if err := ralphdir.WriteFileAtomic(d.Path(), d.CurrentChain(), []byte(s.ID+"\n")); err != nil {
		return fmt.Errorf("write %s: %w", runfiles.CurrentChainFile, err)
	}
	return nil
}

// Load reads chain run id's state; ErrNoChain when there is none, a
// *CorruptStateError when it cannot be used.
func Load(d runfiles.Dir, id string) (*State, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q is not a chain run's id", ErrNoChain, id)
	}
	path := d.ChainState(id)
	data, err := ralphdir.ReadFile(d.Path(), path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %s in %s", ErrNoChain, id, d.Path())
	}
	if err != nil {
		return nil, err
	}
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, &CorruptStateError{Path: path, Err: err}
	}
	if !readsVersion(probe.Version) {
		return nil, &CorruptStateError{Path: path, Err: fmt.Errorf("version %d, this ralph reads 1 to %d", probe.Version, stateVersion)}
	}
	w := wireState{State: &State{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return nil, &CorruptStateError{Path: path, Err: err}
	}
	if err := w.validate(id); err != nil {
		return nil, &CorruptStateError{Path: path, Err: err}
	}
	return w.State, nil
}

func (s *State) validate(id string) error {
	switch {
	case s.ID != id:
		return fmt.Errorf("id %q in the directory of %q", s.ID, id)
	case len(s.Plan.Steps) == 0:
		return errors.New("a plan without steps")
	case s.Current < 1 || s.Current > len(s.Plan.Steps)+1:
		return fmt.Errorf("current step %d of %d", s.Current, len(s.Plan.Steps))
	}
	switch s.Status {
	case Running, Completed, Stopped:
	default:
		return fmt.Errorf("unknown status %q", s.Status)
	}
	return nil
}

// Latest is the workspace's current chain run (the one last started or
// resumed); ErrNoChain when there is none.
func Latest(d runfiles.Dir) (*State, error) {
	data, err := ralphdir.ReadFile(d.Path(), d.CurrentChain())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoChain, d.Path())
	}
	if err != nil {
		return nil, err
	}
	return Load(d, strings.TrimSpace(string(data)))
}

// NewID is the id of a chain run named name started at now:
// NAME-YYYYMMDD-HHMMSS (chain-… for steps given on the command line),
// with a suffix when a run of that second exists.
func NewID(d runfiles.Dir, name string, now time.Time) string {
	base := cmpOr(safeName(name), "chain") + "-" + now.UTC().Format("20060102-150405")
	id := base
	for i := 1; ; i++ {
		if _, err := ralphdir.ReadFile(d.Path(), d.ChainState(id)); errors.Is(err, fs.ErrNotExist) {
			return id
		}
		id = fmt.Sprintf("%s-%d", base, i)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// safeName keeps the letters, digits, - and _ of a chain's name, so that
// its id is one directory's name.
func safeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// validID reports whether id could be a run's directory name: what
// current-chain says is read from a file a repository may bring.
func validID(id string) bool { return id != "" && safeName(id) == id && len(id) <= 200 }

// ReopenCutShort reopens, at the step where it stopped, a chain that a
// step stopped on an end its loop can go on from as it is (stopped by
// `ralph stop`, failures in a row, a fatal error whose cause the user
// fixed: runfiles.Reason.Resumable, without a limit to raise first; or
// no end recorded at all, as when its loop could not write its files), so
// that `ralph chain resume` goes on with it as `ralph loop --resume` goes
// on with a loop of its own; it says whether it did. A step that ended on
// a limit waits for a larger one (Rebudget); one that completed, was
// cancelled or stuck ends the chain for good.
func (s *State) ReopenCutShort() bool {
	if !s.CutShort() {
		return false
	}
	s.Status, s.ExitCode, s.Message = Running, exitcode.OK, ""
	s.Record(s.Current).Status = Running
	return true
}

// CutShort reports whether ReopenCutShort would reopen the chain.
func (s *State) CutShort() bool {
	if s.Status != Stopped || s.ExitCode == exitcode.Limit || s.Current > len(s.Plan.Steps) {
		return false
	}
	rec := s.Record(s.Current)
	if rec == nil || rec.Status != Stopped {
		return false
	}
	r := runfiles.Reason(rec.Reason)
	return r == "" || (r.Resumable() && !r.SaysHowToGoOn())
}

// Rebudget gives the chain budget b in place of its own, recorded in
// BudgetChanges, and says whether the chain goes on: a running chain (cut
// off) does, with b; a chain that a limit stopped (its budget, or a
// step's limit, exit status 2) is reopened at the step where it stopped,
// whose loop is resumed with what b leaves it; a chain that completed, or
// that a step stopped otherwise, does not, and keeps its budget.
func (s *State) Rebudget(b Budget, now time.Time) (goesOn bool) {
	reopen := s.Status == Stopped && s.ExitCode == exitcode.Limit && s.Current <= len(s.Plan.Steps)
	if s.Ended() && !reopen {
		return false
	}
	if b != s.Plan.Budget {
		s.BudgetChanges = append(s.BudgetChanges, BudgetChange{At: now, From: s.Plan.Budget, To: b})
		s.Plan.Budget = b
	}
	if reopen {
		s.Status, s.ExitCode, s.Message = Running, exitcode.OK, ""
		if rec := s.Record(s.Current); rec != nil {
			rec.Status = Running
		}
	}
	return true
}
