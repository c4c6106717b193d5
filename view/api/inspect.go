package api

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// What `ralph inspect`, `ralph serve`'s iteration page and `ralph watch`
// show of one iteration, after the fact: the prompt its agent was given,
// what it said and did, and what it changed in the workspace. Each is
// read from the run's log (iteration.started names the prompt's file,
// iteration.finished the trees before and after) and its directory, with
// the reader's secrets hidden.

// InspectedRun is one run's iterations as its log records them: the
// source every inspect view reads.
type InspectedRun struct {
	Dir string // the workspace
	// Files is where the run keeps its files: the workspace's .ralph, or
	// for a chain step's run its step's directory (the log's directory).
	Files runfiles.Dir
	RunID string
	// attempts are each iteration's starts, in log order: a repeated
	// iteration (after an interruption or a rate limit) has several.
	attempts map[int][]attempt
	order    []int
	commits  map[int][]git.Commit
}

type attempt struct {
	started  runfiles.IterationStartedRecord
	finished *runfiles.IterationFinishedRecord
	at       time.Time // when it started, to pick its activity
}

// InspectRun reads the run id of the workspace dir ("" for the current
// run, or the last one), with r's secret values hidden.
func InspectRun(ctx context.Context, dir, id string, r *redact.Redactor) (*InspectedRun, error) {
	path, err := EventQuery{Run: id}.LogPath(dir)
	if err != nil {
		return nil, err
	}
	f, err := ralphdir.OpenFile(runfiles.In(dir).Path(), path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	run := &InspectedRun{Dir: dir, Files: runfiles.Dir(filepath.Dir(path)), attempts: map[int][]attempt{}, commits: map[int][]git.Commit{}}
	err = events.Scan(f, func(rec events.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rec.Err != nil || rec.Event.Source != events.SourceRalph {
			return nil
		}
		rec, _ = view.RedactRecord(r, rec)
		run.apply(rec.Event)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if run.RunID == "" {
		return nil, fmt.Errorf("%s has no loop.started line: it is not a loop's event log", path)
	}
	return run, nil
}

func (run *InspectedRun) apply(ev events.Event) {
	switch ev.Topic {
	case runfiles.TopicLoopStarted:
		var r runfiles.LoopStartedRecord
		if runfiles.Decode(ev, &r) && run.RunID == "" {
			run.RunID = r.RunID
		}
	case runfiles.TopicIterationStarted:
		var r runfiles.IterationStartedRecord
		if runfiles.Decode(ev, &r) && r.Iteration > 0 {
			if _, seen := run.attempts[r.Iteration]; !seen {
				run.order = append(run.order, r.Iteration)
			}
			run.attempts[r.Iteration] = append(run.attempts[r.Iteration], attempt{started: r, at: ev.TS})
		}
	case runfiles.TopicIterationFinished:
		var r runfiles.IterationFinishedRecord
		if runfiles.Decode(ev, &r) {
			if as := run.attempts[r.Iteration]; len(as) > 0 && as[len(as)-1].finished == nil {
				as[len(as)-1].finished = &r
			}
		}
	case runfiles.TopicCommit:
		var r runfiles.CommitRecord
		if runfiles.Decode(ev, &r) {
			run.commits[r.Iteration] = append(run.commits[r.Iteration], git.Commit{Hash: r.Hash, Subject: r.Subject})
		}
	}
}

// Iterations are the numbers of the run's iterations, in order.
func (run *InspectedRun) Iterations() []int { return run.order }

// NoIterationError is an iteration the run does not have.
type NoIterationError struct {
	RunID     string
	Iteration int
	Have      []int
}

func (e *NoIterationError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("run %s has no iteration %d: no iteration has started", e.RunID, e.Iteration)
	}
	return fmt.Sprintf("run %s has no iteration %d: it has iterations %s", e.RunID, e.Iteration, spans(e.Have))
}

func (e *NoIterationError) Hint() string {
	return "pick one of those, or another run with --run ID (`ralph events --runs` lists them)"
}

// spans writes 1 2 3 5 as "1–3, 5".
func spans(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// last is iteration n's last attempt: the one that ran to its end.
func (run *InspectedRun) last(n int) (attempt, error) {
	as := run.attempts[n]
	if len(as) == 0 {
		return attempt{}, &NoIterationError{RunID: run.RunID, Iteration: n, Have: run.order}
	}
	return as[len(as)-1], nil
}

// Prompt is the prompt an iteration's agent was given, as ralph kept it.
type Prompt struct {
	Run       string `json:"run"`
	Iteration int    `json:"iteration"`
	Attempt   int    `json:"attempt"`
	Attempts  int    `json:"attempts"`
	Hat       string `json:"hat"`
	// File is where it is kept, relative to the workspace.
	File   string `json:"file"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Intact says the file is the one iteration.started describes (its
	// size and hash match); a power cut, or a hand, may have changed it.
	Intact bool   `json:"intact"`
	Text   string `json:"text"`
}

// Prompt reads iteration n's prompt (its last attempt's).
func (run *InspectedRun) Prompt(n int, r *redact.Redactor) (Prompt, error) {
	a, err := run.last(n)
	if err != nil {
		return Prompt{}, err
	}
	s := a.started
	if s.Prompt == "" {
		return Prompt{}, &hint.Error{Err: fmt.Errorf("run %s kept no prompt for iteration %d: the run is from before ralph kept prompts", run.RunID, n),
			Fix: "runs started with this version of ralph keep every iteration's prompt under .ralph/runs/<run>/"}
	}
	data, rel, err := run.readRunFile(s.Prompt)
	if err != nil {
		return Prompt{}, err
	}
	sum := sha256.Sum256(data)
	return Prompt{Run: run.RunID, Iteration: n, Attempt: max(s.Attempt, 1), Attempts: len(run.attempts[n]), Hat: s.Hat,
		File: rel, Bytes: s.PromptBytes, SHA256: s.PromptSHA256,
		Intact: len(data) == s.PromptBytes && hex.EncodeToString(sum[:]) == s.PromptSHA256,
		Text:   r.String(string(data))}, nil
}

// readRunFile reads name, a file of the run's directory as the log names
// it, never through a link, and returns it with its path relative to the
// workspace.
func (run *InspectedRun) readRunFile(name string) ([]byte, string, error) {
	if name != filepath.Base(name) || name == "." || name == ".." {
		return nil, "", fmt.Errorf("the log names %q, which is not a file of the run's directory", name)
	}
	files := run.Files
	path := filepath.Join(files.Run(run.RunID), name)
	rel := filepath.ToSlash(filepath.Join(run.Files.Rel(), runfiles.RunsDir, run.RunID, name))
	data, err := ralphdir.ReadFile(files.Path(), path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, rel, &hint.Error{Err: fmt.Errorf("%s is gone", rel),
			Fix: "the run's files were removed (an old run cleaned up with `ralph runs clean`, or by hand); its log still says what happened"}
	}
	return data, rel, err
}

// PromptDiff is two iterations' prompts compared, as a unified diff.
type PromptDiff struct {
	Run  string `json:"run"`
	From int    `json:"from"`
	To   int    `json:"to"`
	// Diff is "" when the prompts are the same.
	Diff string `json:"diff"`
}

// PromptDiff compares iteration n's prompt with m's.
func (run *InspectedRun) PromptDiff(ctx context.Context, n, m int, r *redact.Redactor) (PromptDiff, error) {
	from, err := run.Prompt(n, r)
	if err != nil {
		return PromptDiff{}, err
	}
	to, err := run.Prompt(m, r)
	if err != nil {
		return PromptDiff{}, err
	}
	// The files are compared where they are (git diff --no-index): they
	// were written by ralph, already redacted, and read again to hide the
	// reader's own secrets.
	diff, err := git.DiffFiles(ctx, run.Files.Run(run.RunID), filepath.Base(from.File), filepath.Base(to.File))
	if err != nil {
		return PromptDiff{}, fmt.Errorf("compare the prompts: %w", err)
	}
	return PromptDiff{Run: run.RunID, From: n, To: m, Diff: r.String(diff)}, nil
}

// Output is what an iteration's agent said and did.
type Output struct {
	Run       string           `json:"run"`
	Iteration int              `json:"iteration"`
	Hat       string           `json:"hat"`
	Outcome   runfiles.Outcome `json:"outcome,omitempty"`
	Message   string           `json:"message,omitempty"`
	// FinalText is the agent's last message: the last text it wrote, as
	// the run's activity keeps it, or the end of it the log keeps when
	// the activity has none.
	FinalText string `json:"final_text"`
	// Activity is what it did, a line each (view.ActivityLines).
	Activity []string `json:"activity"`
	// RawOutput is the agent's own output, relative to the workspace.
	RawOutput string `json:"raw_output"`
}

// Output reads what iteration n's agent (its last attempt) said and did.
func (run *InspectedRun) Output(n int, r *redact.Redactor) (Output, error) {
	a, err := run.last(n)
	if err != nil {
		return Output{}, err
	}
	out := Output{Run: run.RunID, Iteration: n, Hat: a.started.Hat, Activity: []string{},
		RawOutput: filepath.ToSlash(filepath.Join(run.Files.Rel(), runfiles.RunsDir, run.RunID, runfiles.RawOutput(n, max(a.started.Attempt, 1))))}
	if f := a.finished; f != nil {
		out.Outcome, out.Message, out.FinalText = f.Outcome, f.Message, f.Said
	}
	acts, err := run.activity(n, a.at)
	if err != nil {
		return Output{}, err
	}
	for _, act := range acts {
		if act.Kind == events.ActivityText && strings.TrimSpace(act.Text) != "" {
			out.FinalText = act.Text
		}
		for _, line := range view.ActivityLines(act) {
			out.Activity = append(out.Activity, r.String(line))
		}
	}
	out.FinalText, out.Message = r.String(out.FinalText), r.String(out.Message)
	return out, nil
}

// activity is iteration n's activity since its last attempt started.
func (run *InspectedRun) activity(n int, since time.Time) ([]runfiles.ActivityRecord, error) {
	files := run.Files
	f, err := ralphdir.OpenFile(files.Path(), files.Activity(run.RunID), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []runfiles.ActivityRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var a runfiles.ActivityRecord
		if json.Unmarshal(sc.Bytes(), &a) != nil || a.Iteration != n {
			continue
		}
		if a.TS.Before(since) {
			continue // an earlier attempt's
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return out, nil
}

// Diff is what an iteration changed in the workspace.
type Diff struct {
	Run        string       `json:"run"`
	Iteration  int          `json:"iteration"`
	Hat        string       `json:"hat"`
	HeadBefore string       `json:"head_before,omitempty"`
	HeadAfter  string       `json:"head_after,omitempty"`
	Commits    []git.Commit `json:"commits"`
	// Patch is the change of the workspace's files, committed or not,
	// from before the agent started to after it ended, its stat first;
	// "" when it changed nothing.
	Patch string `json:"patch"`
}

// objectName is what a tree or commit recorded in the log must look like
// before it is handed to git: a line written by hand could hold an option.
var objectName = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// Diff reads what iteration n (its last attempt) changed, from the trees
// the log recorded before and after it.
func (run *InspectedRun) Diff(ctx context.Context, n int, r *redact.Redactor) (Diff, error) {
	a, err := run.last(n)
	if err != nil {
		return Diff{}, err
	}
	var t *runfiles.TreesRecord
	if a.finished != nil {
		t = a.finished.Trees
	}
	switch {
	case a.finished == nil:
		return Diff{}, &hint.Error{Err: fmt.Errorf("iteration %d of run %s has not finished", n, run.RunID),
			Fix: "what it changed is recorded when its agent ends; `ralph inspect output` shows what it does so far"}
	case t == nil:
		return Diff{}, &hint.Error{Err: fmt.Errorf("run %s recorded no workspace trees for iteration %d: the run is from before ralph recorded them", run.RunID, n),
			Fix: "its commits are in its log: ralph events --run " + run.RunID + " --topic git.commit"}
	case t.Unavailable != "":
		return Diff{}, &hint.Error{Err: fmt.Errorf("what iteration %d changed is not available: %s", n, t.Unavailable),
			Fix: "ralph records an iteration's changes in a git repository; `git init` the workspace for later runs"}
	}
	for _, name := range []string{t.Before, t.After, t.HeadBefore, t.HeadAfter} {
		if name != "" && !objectName.MatchString(name) {
			return Diff{}, fmt.Errorf("iteration %d's record names %q, which is not a git object name", n, name)
		}
	}
	d := Diff{Run: run.RunID, Iteration: n, Hat: a.started.Hat, HeadBefore: t.HeadBefore, HeadAfter: t.HeadAfter, Commits: run.commits[n]}
	if d.Commits == nil {
		d.Commits = []git.Commit{}
	}
	if t.Before != t.After {
		patch, err := git.Repo{Dir: run.Dir}.DiffTrees(ctx, t.Before, t.After)
		if err != nil {
			return Diff{}, &hint.Error{Err: fmt.Errorf("diff iteration %d's trees: %w", n, err),
				Fix: "git prunes the trees ralph recorded once they are older than its gc grace period (two weeks by default); the iteration's commits are still listed by git log"}
		}
		d.Patch = r.String(patch)
	}
	return d, nil
}

// WriteText writes the prompt as the agent was given it, and nothing
// else, so that it can be saved or piped as it is.
func (p Prompt) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, strings.TrimRight(p.Text, "\n")+"\n")
	return err
}

// WriteText writes what the agent said and did, for people.
func (o Output) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "iteration %d, hat %s", o.Iteration, o.Hat)
	if o.Outcome != "" {
		fmt.Fprintf(&b, ": %s", o.Outcome)
	}
	if o.Message != "" {
		fmt.Fprintf(&b, " (%s)", o.Message)
	}
	b.WriteString("\n\nfinal text:\n")
	if strings.TrimSpace(o.FinalText) == "" {
		b.WriteString("  (none)\n")
	}
	for line := range strings.Lines(strings.TrimRight(o.FinalText, "\n")) {
		b.WriteString("  " + line)
	}
	b.WriteString("\n\nactivity:\n")
	if len(o.Activity) == 0 {
		b.WriteString("  (none recorded)\n")
	}
	for _, line := range o.Activity {
		b.WriteString("  " + line + "\n")
	}
	fmt.Fprintf(&b, "\nraw output: %s\n", o.RawOutput)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the iteration's commits and its patch.
func (d Diff) WriteText(w io.Writer) error {
	var b strings.Builder
	switch len(d.Commits) {
	case 0:
		fmt.Fprintf(&b, "iteration %d (hat %s) made no commit\n", d.Iteration, d.Hat)
	default:
		fmt.Fprintf(&b, "iteration %d (hat %s) made %d commit(s):\n", d.Iteration, d.Hat, len(d.Commits))
		for _, c := range d.Commits {
			fmt.Fprintf(&b, "  %s %s\n", short(c.Hash), c.Subject)
		}
	}
	if d.Patch == "" {
		b.WriteString("and changed no file\n")
	} else {
		b.WriteString("\n" + strings.TrimRight(d.Patch, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// WriteText writes the unified diff of the two prompts.
func (d PromptDiff) WriteText(w io.Writer) error {
	if d.Diff == "" {
		_, err := fmt.Fprintf(w, "the prompts of iterations %d and %d are the same\n", d.From, d.To)
		return err
	}
	_, err := io.WriteString(w, strings.TrimRight(d.Diff, "\n")+"\n")
	return err
}

// Kind says an iteration that does not exist is not found (serve's 404).
func (e *NoIterationError) Kind() hint.Kind { return hint.NotFound }

// IterationView is everything inspect knows of one iteration, in one
// value for the front-ends that show it whole (serve's iteration page,
// watch): each part, or why it is missing.
type IterationView struct {
	Run        string       `json:"run"`
	Iteration  int          `json:"iteration"`
	Iterations []int        `json:"iterations"`
	Prompt     *Prompt      `json:"prompt,omitempty"`
	Output     *Output      `json:"output,omitempty"`
	Diff       *Diff        `json:"diff,omitempty"`
	Missing    []MissingBit `json:"missing,omitempty"`
}

// MissingBit is a part of an iteration's view that could not be read.
type MissingBit struct {
	Part  string `json:"part"` // prompt, output or diff
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
}

// View reads all of iteration n; an iteration the run does not have is
// the only error.
func (run *InspectedRun) View(ctx context.Context, n int, r *redact.Redactor) (IterationView, error) {
	if _, err := run.last(n); err != nil {
		return IterationView{}, err
	}
	v := IterationView{Run: run.RunID, Iteration: n, Iterations: run.order}
	miss := func(part string, err error) {
		v.Missing = append(v.Missing, MissingBit{Part: part, Error: r.String(err.Error()), Hint: r.String(hint.Of(err))})
	}
	if p, err := run.Prompt(n, r); err != nil {
		miss("prompt", err)
	} else {
		v.Prompt = &p
	}
	if o, err := run.Output(n, r); err != nil {
		miss("output", err)
	} else {
		v.Output = &o
	}
	if d, err := run.Diff(ctx, n, r); err != nil {
		miss("diff", err)
	} else {
		v.Diff = &d
	}
	return v, nil
}

// WriteText writes the iteration whole, for a terminal: each part under
// its heading, or why it is missing.
func (v IterationView) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, m := range v.Missing {
		fmt.Fprintf(&b, "%s: %s\n", m.Part, m.Error)
		if m.Hint != "" {
			fmt.Fprintf(&b, "  %s\n", m.Hint)
		}
	}
	if p := v.Prompt; p != nil {
		fmt.Fprintf(&b, "\n== prompt (hat %s, %s, %d bytes) ==\n\n", p.Hat, p.File, p.Bytes)
		if err := p.WriteText(&b); err != nil {
			return err
		}
	}
	if o := v.Output; o != nil {
		b.WriteString("\n== output ==\n\n")
		if err := o.WriteText(&b); err != nil {
			return err
		}
	}
	if d := v.Diff; d != nil {
		b.WriteString("\n== diff ==\n\n")
		if err := d.WriteText(&b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, strings.TrimLeft(b.String(), "\n"))
	return err
}

// EventIteration is the iteration an event belongs to (0 for none): an
// agent's event says so itself, ralph's iteration lines in their payload.
// started says ev is ralph's iteration.started line.
func EventIteration(ev events.Event) (n int, started bool) {
	if ev.Iteration > 0 {
		return ev.Iteration, false
	}
	if ev.Source != events.SourceRalph {
		return 0, false
	}
	var p struct {
		Iteration int `json:"iteration"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return 0, false
	}
	return p.Iteration, p.Iteration > 0 && ev.Topic == runfiles.TopicIterationStarted
}
