// Package tasks owns the task trackers the autopilot works through: one
// small Source interface, and one file per tracker (tk, beads, prd.json,
// a markdown checklist, and shell commands for any other tracker). A source
// lists ready tasks in priority order and records what ralph did with them
// (claimed, closed, failed); it never decides what to run, which is the
// autopilot's job. A task may name the agent its loop runs with (agent.go),
// which the source reads as the tracker writes it and [Task.CheckAgent]
// judges.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/internal/forge"
)

// ErrNoTask is wrapped by the errors of Show, Claim, Close and Fail when the
// tracker has no task with the id given.
var ErrNoTask = errors.New("no such task")

// DuplicateIDError is a tracker that gives two or more tasks one id. ralph
// knows a task by its id alone (its branch, worktree, claim and close), so
// it would run the first of them on every run and never the others: the
// sources refuse such a tracker instead.
type DuplicateIDError struct {
	ID string
	// Kind is what the tracker calls its tasks, plural ("stories").
	Kind string
	// In is where the tasks are: a file or directory of the repository,
	// or a command's output.
	In string
	// Places say where each task with the id is in it, in order
	// ("userStories[0] on line 4", "line 3", ".tickets/copy.md").
	Places []string
	// Fix says how to give each task an id of its own.
	Fix string
}

func (e *DuplicateIDError) Error() string {
	return fmt.Sprintf("%d %s in %s have the id %q (%s)", len(e.Places), e.Kind, e.In, e.ID, strings.Join(e.Places, ", "))
}

// Hint says how to fix the tracker.
func (e *DuplicateIDError) Hint() string { return e.Fix }

// whyOneID ends the fix of a *DuplicateIDError.
const whyOneID = "ralph knows a task by its id alone, and would run one of them on every run and never the other"

// duplicate finds the first id that more than one of ids has, and the
// indexes of those; nil indexes when every id is unique.
func duplicate(ids []string) (string, []int) {
	at := map[string][]int{}
	for i, id := range ids {
		at[id] = append(at[id], i)
	}
	for _, id := range ids {
		if len(at[id]) > 1 {
			return id, at[id]
		}
	}
	return "", nil
}

// checkUnique returns a *DuplicateIDError for the first id that more than
// one of ids has, placing each with place(index); nil when they are all
// unique.
func checkUnique(ids []string, kind, in, fix string, place func(int) string) error {
	id, at := duplicate(ids)
	if at == nil {
		return nil
	}
	places := make([]string, len(at))
	for i, k := range at {
		places[i] = place(k)
	}
	return &DuplicateIDError{ID: id, Kind: kind, In: in, Places: places, Fix: fix}
}

// Task is one unit of work from a tracker, as the autopilot needs it.
type Task struct {
	// ID names the task in its tracker; ValidID must accept it before it
	// names a path or a branch.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Description is the task's body text, without the title and without
	// the acceptance criteria.
	Description string `json:"description,omitempty"`
	// Priority orders ready tasks: lower first (0 is the highest).
	Priority int `json:"priority"`
	// Status is the tracker's own word (open, in_progress, closed, …).
	Status string `json:"status,omitempty"`
	// Closed reports whether the tracker already counts the task done.
	Closed bool `json:"closed,omitempty"`
	// Tags are the tracker's tags or labels, as written ("component:api").
	Tags []string `json:"tags,omitempty"`
	// Deps are the ids of tasks this one waits for that are not closed.
	Deps []string `json:"deps,omitempty"`
	// Criteria are the task's acceptance criteria, one per item.
	Criteria []Criterion `json:"criteria,omitempty"`
	// Backend and Model are the agent the task names for its loop
	// (agent.go), as written: CheckAgent says whether they can be used.
	// "" leaves the config's.
	Backend string `json:"backend,omitempty"`
	Model   string `json:"model,omitempty"`
}

// Criterion is one acceptance criterion of a task. Command is set when the
// item is a shell command (the whole item a code span, `go test ./...`, or
// a line starting with "$ "); the autopilot runs it only when the config
// trusts task commands.
type Criterion struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

// Components returns the task's component:* tags without the prefix.
func (t Task) Components() []string {
	var out []string
	for _, tag := range t.Tags {
		if c, ok := strings.CutPrefix(tag, "component:"); ok && c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Source is a task tracker.
type Source interface {
	// Name is the source's type, as written in the config (tk, beads, …).
	Name() string
	// Ready lists the tasks that can start now, highest priority first,
	// ties in the tracker's own order (by id for tk and beads, file order
	// for a checklist). It may include tasks ralph has claimed: the
	// autopilot keeps its own record of those. Each task is whole, as
	// Show would give it: the dry run plans from Ready alone, and a
	// backlog of thousands must not cost a look at the tracker per task.
	Ready(ctx context.Context) ([]Task, error)
	// Show returns one task, whatever its status.
	Show(ctx context.Context, id string) (Task, error)
	// Claim marks the task as being worked on.
	Claim(ctx context.Context, id string) error
	// Close marks the task done; reason says what was merged.
	Close(ctx context.Context, id, reason string) error
	// Fail records that ralph gave up on the task and why, where the
	// tracker can hold it; the task stays open.
	Fail(ctx context.Context, id, reason string) error
	// Files are the paths, relative to the repository root, that the
	// tracker keeps inside the repository (".tickets", "prd.json"). The
	// autopilot commits ralph's changes to them on the base branch and
	// never merges a task branch's changes to them. None when the tracker
	// cannot say (a command source without files:): the autopilot then
	// commits the paths each Claim, Close and Fail changed.
	Files() []string
	// Tool is the program the source runs, which must be on PATH ("tk",
	// "bd"), or "" when it needs none.
	Tool() string
}

// Blocker is implemented by sources that can list open tasks waiting on
// dependencies, for the dry run's plan.
type Blocker interface {
	Blocked(ctx context.Context) ([]Task, error)
}

// Splitter is implemented by sources that tell the ready tasks from the
// blocked ones in one read of the tracker (one list command, one read of
// a file, one listing of a forge's issues), for the dry run's plan, which
// would otherwise read it once for Ready and again for Blocked. ready is
// what Ready gives, blocked what Blocked gives.
type Splitter interface {
	Split(ctx context.Context) (ready, blocked []Task, err error)
}

// Reopener is implemented by sources that can open a task again after
// closing it (a forge's issues): its pull request was closed unmerged.
type Reopener interface {
	Reopen(ctx context.Context, id, reason string) error
}

// Remote is implemented by sources that keep nothing in the repository
// (a forge's issues): no claim, close or fail changes a file.
type Remote interface {
	Remote() bool
}

// Spec is the config's autopilot.source: a type and that type's settings.
type Spec struct {
	Type string // tk, beads, prd, checklist, command
	Path string // prd (default prd.json), checklist (default TODO.md)
	// Commands of a command source, run with sh -c in the repository
	// root; RALPH_TASK_ID and RALPH_TASK_REASON are set for claim, close
	// and fail.
	List, Claim, Close, Fail string
	// Show, optional, prints the one task RALPH_TASK_ID names, as list
	// prints tasks: a command source then runs it, not list, to show a
	// task and to check one exists before a claim, close or fail.
	Show string
	// Files are the paths, relative to the repository root, that a
	// command source's commands change (its Files). None: the autopilot
	// learns them from what each command changed.
	Files []string
	// Repo (github), Project (gitlab) and Team (linear) name a forge
	// tracker's backlog; Labels and States select its issues; Assignee
	// is whose issues are taken besides unassigned ones ("": the token's
	// user); TokenEnv names the variable holding the token; APIURL is
	// the service's API ("": the public service's).
	Repo, Project, Team string
	Labels, States      []string
	Assignee            string
	TokenEnv, APIURL    string
	// Wait is told before each wait a forge's rate limit asks for.
	Wait forge.Waiter
}

// Open returns the source a spec names, working in the repository at dir.
func Open(spec Spec, dir string) (Source, error) {
	switch spec.Type {
	case "tk":
		return &tkSource{dir: dir}, nil
	case "beads":
		return &beadsSource{dir: dir}, nil
	case "prd":
		return &prdSource{dir: dir, path: orDefault(spec.Path, "prd.json")}, nil
	case "checklist":
		return &checklistSource{dir: dir, path: orDefault(spec.Path, "TODO.md")}, nil
	case "command":
		if strings.TrimSpace(spec.List) == "" {
			return nil, errors.New("autopilot.source command: list is required: a shell command that prints the tasks as JSON")
		}
		if strings.TrimSpace(spec.Close) == "" {
			return nil, errors.New("autopilot.source command: close is required: a shell command that marks $RALPH_TASK_ID done")
		}
		return &commandSource{dir: dir, spec: spec}, nil
	case "github":
		return openGitHub(spec)
	case "gitlab":
		return openGitLab(spec)
	case "linear":
		return openLinear(spec)
	case "":
		return nil, errors.New("autopilot.source has no type: choose tk, beads, prd, checklist, command, github, gitlab or linear")
	default:
		return nil, fmt.Errorf("autopilot.source type %q is not one of tk, beads, prd, checklist, command, github, gitlab, linear", spec.Type)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ValidID reports whether id can name a worktree directory and a git
// branch: letters, digits, '.', '_' and '-', not starting with '.' or '-',
// at most 64 characters, no "..", not ending in '.' or ".lock". The error
// says what is wrong with the id.
func ValidID(id string) error { return ValidName("task id", id) }

// ASCIILetters is text with the accents of its letters dropped and the
// Latin letters that have none written out in ASCII (ß as ss, æ as ae),
// as a checklist's ids are made from its boxes' text: for a name made from
// a person's words (a loop's worktree's). Upper case stays upper case.
func ASCIILetters(text string) string { return asciiLetters(text) }

// ValidName is ValidID's check of any name that names a directory and a
// branch; what says what the name is in the error ("worktree name").
func ValidName(what, name string) error {
	const most = 64
	switch {
	case name == "":
		return fmt.Errorf("%s is empty", what)
	case len(name) > most:
		return fmt.Errorf("%s %.20q… is %d bytes long; at most %d can name a branch", what, name, len(name), most)
	case name[0] == '.' || name[0] == '-':
		return fmt.Errorf("%s %q starts with %q, which a directory or branch name must not", what, name, name[:1])
	case strings.Contains(name, ".."):
		return fmt.Errorf("%s %q contains \"..\", which a branch name must not", what, name)
	case strings.HasSuffix(name, ".lock"):
		return fmt.Errorf("%s %q ends in \".lock\", which a branch name must not", what, name)
	case strings.HasSuffix(name, "."):
		return fmt.Errorf("%s %q ends in '.', which a branch name must not", what, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%s %q contains %q: only ASCII letters (a-z, A-Z), digits, '.', '_' and '-' can name a directory and a branch", what, name, r)
		}
	}
	return nil
}
