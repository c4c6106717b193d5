package chain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/excerpt"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Limits on what one step hands the next: the agent wrote both, so they
// are bounded before they reach a prompt.
const (
	HandoffLimit = 16 * 1024
	PayloadLimit = 8 * 1024
)

// Handoff is what a step passes to the next one's objective.
type Handoff struct {
	N     int    // the step that handed off
	Label string // its preset or config
	// Payload is its completion event's payload, Notes its handoff.md;
	// either may be empty.
	Payload string
	Notes   string
	// NotesFile is handoff.md relative to the workspace.
	NotesFile string
}

// Outcome is what a step's loop left in its directory once it ended.
type Outcome struct {
	RunID    string
	Reason   runfiles.Reason
	ExitCode int
	Message  string
	Spent    Spent // Steps is 0: the caller counts starts
	Payload  string
}

// ErrNoRun says a step's directory holds no run: its loop failed before
// it started one (a bad config, say), and its exit status says why.
var ErrNoRun = errors.New("the step's loop started no run")

// ReadOutcome reads what the loop in step directory d did: its
// checkpoint for how it ended and what it spent, and its event log for
// the payload of its completion (topic), the last the agent published.
func ReadOutcome(d runfiles.Dir, topic string, now time.Time) (Outcome, error) {
	st, _, err := runfiles.Checkpoint{Path: d.State()}.Load()
	if errors.Is(err, runfiles.ErrNoState) {
		return Outcome{}, ErrNoRun
	}
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{RunID: st.RunID, Spent: Spent{Runtime: st.Runtime(now), CostUSD: st.CostUSD, Tokens: usageTokens(st.Usage)}}
	if t := st.Terminated; t != nil {
		out.Reason, out.ExitCode, out.Message = t.Reason, t.ExitCode, t.Message
	}
	if out.Reason == runfiles.ReasonCompleted && topic != "" {
		out.Payload, err = completionPayload(d, st.EventsFile, topic)
	}
	return out, err
}

func completionPayload(d runfiles.Dir, rel, topic string) (string, error) {
	path, err := runfiles.LogPath(d.Workspace(), rel)
	if err != nil {
		return "", err
	}
	recs, err := events.NewReader(path, 0).Read()
	if err != nil {
		return "", err
	}
	var payload string
	for _, r := range recs {
		if r.Err == nil && r.Event.Topic == topic && r.Event.Published() {
			if p := r.Event.PayloadText(); strings.TrimSpace(p) != "" {
				payload = p
			}
		}
	}
	return bounded(payload, PayloadLimit), nil
}

// ReadNotes reads the handoff.md step directory d's agent wrote: "" when
// there is none; a link, a directory or anything not a regular file is
// refused, and a long one is cut to HandoffLimit.
func ReadNotes(d runfiles.Dir) (string, error) {
	f, err := ralphdir.OpenFile(runfiles.In(d.Workspace()).Path(), d.Handoff(), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the handoff: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read the handoff: %s is not a regular file", d.Handoff())
	}
	data, err := io.ReadAll(io.LimitReader(f, 4*HandoffLimit))
	if err != nil {
		return "", fmt.Errorf("read the handoff: %w", err)
	}
	return bounded(string(data), HandoffLimit), nil
}

// bounded is s cut to its beginning and end when longer than limit.
func bounded(s string, limit int) string {
	head, tail, omitted := excerpt.Cut(strings.ToValidUTF8(s, "\uFFFD"), limit)
	if omitted == 0 {
		return head
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", head, omitted, tail)
}

// Objective is the objective of step n: the chain's objective, the step's
// own prompt, and what the step before it handed off (nil for the first).
func Objective(plan Plan, n int, prev *Handoff) string {
	var parts []string
	if o := strings.TrimSpace(plan.Objective); o != "" {
		parts = append(parts, o)
	}
	if p := strings.TrimSpace(plan.Steps[n-1].Prompt); p != "" {
		parts = append(parts, p)
	}
	if prev != nil && (prev.Payload != "" || prev.Notes != "") {
		var b strings.Builder
		fmt.Fprintf(&b, "## From the previous step of this chain (step %d, %s)\n", prev.N, prev.Label)
		if prev.Payload != "" {
			fmt.Fprintf(&b, "\nIt completed with:\n\n%s\n", fence(prev.Payload))
		}
		if prev.Notes != "" {
			fmt.Fprintf(&b, "\nIts handoff notes (%s):\n\n%s\n", prev.NotesFile, fence(prev.Notes))
		}
		parts = append(parts, strings.TrimRight(b.String(), "\n"))
	}
	return strings.Join(parts, "\n\n")
}

// fence quotes text an agent wrote as a block the next agent reads as
// data, with a fence longer than any run of backticks in it.
func fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// HandoffOf is the handoff of step n, whose outcome was out, in chain
// directory d.
func HandoffOf(d runfiles.Dir, s *State, n int, out Outcome) (*Handoff, error) {
	step := d.ChainStep(s.ID, n)
	notes, err := ReadNotes(step)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(d.Workspace(), step.Handoff())
	return &Handoff{N: n, Label: s.Plan.Steps[n-1].Label(), Payload: out.Payload, Notes: notes, NotesFile: filepath.ToSlash(rel)}, nil
}

// ObjectiveFile is the name, in a step's directory, of the objective its
// loop was started with (`ralph loop -P`): an objective of any length,
// kept for whoever looks at the chain afterwards.
const ObjectiveFile = "objective.md"

// WriteObjective writes run's objective into its step's directory and
// returns the file's path.
func WriteObjective(run StepRun) (string, error) {
	path := filepath.Join(run.Dir.Path(), ObjectiveFile)
	if err := ralphdir.WriteFileAtomic(runfiles.In(run.Dir.Workspace()).Path(), path, []byte(run.Objective+"\n")); err != nil {
		return "", fmt.Errorf("write step %d's objective: %w", run.N, err)
	}
	return path, nil
}
