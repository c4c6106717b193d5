package runfiles

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// A human in the loop: an agent asks a person with `ralph ask`, the run
// waits (PhaseAwaitingHuman) until `ralph answer` or the question's
// deadline, and the answer reaches the hat that asked.
//
// The question is an agent line (human.asked), decided like any other in
// settling: accepted as AsQuestion, with the timeout in force, it becomes
// RunState.Question. The answer is a line of its own (human.answered,
// source human) that the fold routes to the asking hat; a deadline that
// passes first is ralph's human.timed_out, routed the same way.
const (
	TopicHumanAsked    = "human.asked"
	TopicHumanAnswered = "human.answered"
	TopicHumanTimedOut = "human.timed_out"
)

// Question is a question an agent asked a person, pending until answered
// or timed out.
type Question struct {
	ID        string    `json:"id"`
	Text      string    `json:"question"`
	Options   []string  `json:"options,omitempty"`
	Hat       string    `json:"hat"`
	Iteration int       `json:"iteration"`
	AskedAt   time.Time `json:"asked_at"`
	// Deadline is when the run stops waiting; zero waits until answered.
	Deadline time.Time `json:"deadline,omitzero"`
}

// AskedRecord is the payload of human.asked, as `ralph ask` writes it.
type AskedRecord struct {
	ID      string   `json:"id"`
	Text    string   `json:"question"`
	Options []string `json:"options,omitempty"`
	// TimeoutSeconds is --timeout; 0 takes human.timeout_seconds.
	TimeoutSeconds int64 `json:"timeout_seconds,omitempty"`
}

// AnsweredRecord is the payload of human.answered; it repeats the
// question so the hat's next prompt shows both.
type AnsweredRecord struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	By       string `json:"by"`
}

// TimedOutRecord is the payload of human.timed_out.
type TimedOutRecord struct {
	ID        string `json:"id"`
	Question  string `json:"question"`
	OnTimeout string `json:"on_timeout"`
	Note      string `json:"note"`
}

// AskLine is the human.asked line `ralph ask` appends, with a new
// question id; the command tags it with the agent's hat and iteration. A
// timeout of 0 leaves the wait to the run's human.timeout_seconds.
func AskLine(text string, options []string, timeout time.Duration) (events.Event, string, error) {
	if strings.TrimSpace(text) == "" {
		return events.Event{}, "", &QuestionError{What: "question", Problem: "the question is empty"}
	}
	if timeout < 0 {
		return events.Event{}, "", &QuestionError{What: "timeout", Problem: "--timeout must not be negative"}
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := "q-" + hex.EncodeToString(b[:])
	rec := AskedRecord{ID: id, Text: text, Options: options, TimeoutSeconds: int64(timeout.Round(time.Second) / time.Second)}
	return events.Event{Topic: TopicHumanAsked, Payload: events.ObjectPayload(rec), Source: events.SourceAgent}, id, nil
}

// QuestionError is a question or an answer refused: which part of it
// (What: "question", "timeout", "answer") and what is wrong with it.
type QuestionError struct{ What, Problem string }

func (e *QuestionError) Error() string { return e.Problem }

func (e *QuestionError) Kind() hint.Kind { return hint.Invalid }

// isQuestion reports whether ev is an agent's question.
func IsQuestion(ev events.Event) bool {
	return ev.Topic == TopicHumanAsked && ev.Published()
}

// questionOf reads the question an accepted human.asked line asks. A tag or
// `ralph emit human.asked TEXT` carries the text alone; its id is then
// made from the line's offset, which the log fixes.
func QuestionOf(u UndecidedEvent, timeout time.Duration) Question {
	var r AskedRecord
	if !Decode(u.Event, &r) {
		r.Text = u.Event.PayloadText()
	}
	if r.ID == "" {
		r.ID = fmt.Sprintf("q%d", u.Offset)
	}
	q := Question{ID: r.ID, Text: strings.TrimSpace(r.Text), Options: r.Options, Hat: AskingHat(u.Event),
		Iteration: u.Event.Iteration, AskedAt: u.Event.TS}
	if timeout > 0 {
		q.Deadline = q.AskedAt.Add(timeout)
	}
	return q
}

func AskingHat(ev events.Event) string {
	if ev.Hat == "" {
		return hats.CoordinatorID
	}
	return ev.Hat
}

// ask makes the question of an accepted human.asked line pending, and
// stops the runtime clock: waiting for a person is not the run's time.
func (s *RunState) ask(u UndecidedEvent, r RoutedRecord, at time.Time) {
	q := QuestionOf(u, time.Duration(r.TimeoutMS)*time.Millisecond)
	s.Question = &q
	s.closeSegment(at)
}

// closeQuestion folds the line that closes the pending question (an
// answer or a time-out): the question is no longer pending, the line goes
// to the hat that asked, and the runtime clock starts again. A line for a
// question that is not pending changes nothing: the first answer wins.
func (s *RunState) closeQuestion(rec events.Record) {
	var r struct {
		ID string `json:"id"`
	}
	if s.Question == nil || !Decode(rec.Event, &r) || r.ID != s.Question.ID {
		return
	}
	hat := s.Question.Hat
	s.Question = nil
	if s.SegmentStart.IsZero() && s.Terminated == nil {
		s.SegmentStart = rec.Event.TS
	}
	s.enqueue(rec.Offset, rec.Event, []string{hat})
}

// NotPendingError means `ralph answer` named a question that is not
// waiting for an answer: answered already, timed out, or never asked.
type NotPendingError struct {
	ID      string
	Pending *Question // the question that is pending, if any
}

func (e *NotPendingError) Error() string {
	switch {
	case e.ID == "":
		return "no question is waiting for an answer"
	case e.Pending == nil:
		return fmt.Sprintf("question %s is not waiting for an answer (answered, timed out, or never asked), and no other is", e.ID)
	}
	return fmt.Sprintf("question %s is not waiting for an answer; %s is", e.ID, e.Pending.ID)
}

func (e *NotPendingError) Kind() hint.Kind { return hint.Conflict }

// ErrRunOver means the run has ended for good: no loop will read an answer.
var ErrRunOver = hint.New(hint.Conflict, "the run has ended (completed or cancelled): no loop will read an answer")

// PendingQuestion is the current run's unanswered question in workspace,
// nil when there is none. It reads the checkpoint and the log past it,
// never taking the lock, so it works beside a running loop and after one
// was killed.
func PendingQuestion(workspace string) (*Question, error) {
	return PendingQuestionIn(In(workspace))
}

// PendingQuestionIn is PendingQuestion for the run whose files are in d
// (a chain step's directory).
func PendingQuestionIn(d Dir) (*Question, error) {
	st, _, err := readRunStateIn(d)
	if err != nil || st == nil {
		return nil, err
	}
	return st.Question, nil
}

// Answer appends a person's answer to the pending question of the current
// run in workspace, in one write: id names the question ("" for the one
// pending), by says who answered ("cli", "watch", "hook NAME", "api"). A
// run killed while it waited finds the answer when it is resumed.
func Answer(workspace, id, text, by string) error {
	if strings.TrimSpace(text) == "" {
		return &QuestionError{What: "answer", Problem: "the answer is empty"}
	}
	st, path, err := readRunState(workspace)
	if err != nil {
		return err
	}
	if st == nil {
		return &NotPendingError{ID: id}
	}
	if t := st.Terminated; t != nil && !t.Reason.Resumable() {
		return ErrRunOver
	}
	q := st.Question
	if q == nil || (id != "" && id != q.ID) {
		return &NotPendingError{ID: id, Pending: q}
	}
	return ralphdir.Explain(path, events.AppendTo(path, events.Event{Topic: TopicHumanAnswered, Source: events.SourceHuman, Target: q.Hat,
		Payload: events.ObjectPayload(AnsweredRecord{ID: q.ID, Question: q.Text, Answer: text, By: by})}))
}

// readRunState folds the current run of workspace from its checkpoint to
// the end of its log: nil when no run has started.
func readRunState(workspace string) (*RunState, string, error) {
	return readRunStateIn(In(workspace))
}

func readRunStateIn(d Dir) (*RunState, string, error) {
	workspace := d.Workspace()
	path, err := CurrentLogIn(d)
	if errors.Is(err, ErrNoLog) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	st, _, err := Checkpoint{Path: d.State()}.Load()
	if err != nil || filepath.Join(workspace, st.EventsFile) != path {
		// No checkpoint, an unusable one, or one of an earlier run: the
		// log alone tells the same.
		st = NewRunState()
	}
	r := events.NewReader(path, st.Offset)
	recs, err := r.Read()
	if err != nil {
		return nil, "", fmt.Errorf("read event log: %w", err)
	}
	for _, rec := range recs {
		st.Apply(rec, noRoutes{})
	}
	return st, path, nil
}

// noRoutes routes nothing: readers of the state that only want the
// question need not load the hats.
type noRoutes struct{}

func (noRoutes) Route(events.Event) []string { return nil }
