package benchgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sources are the trackers a backlog can be written for, as
// autopilot.source's type names them.
var Sources = []string{"tk", "beads", "prd", "checklist", "command"}

// Backlog is what WriteBacklog wrote: the autopilot.source section that
// reads it, and how many of its tasks are ready and blocked.
type Backlog struct {
	// Source is the lines under autopilot: that name the tracker, indented
	// by two spaces ("  source:\n    type: tk\n").
	Source string
	// Ready and Blocked count the open tasks whose dependencies are all
	// done, and those that wait for an open one.
	Ready, Blocked int
}

// blockedEvery makes every tenth task wait for the task before it (which
// is open), so a backlog has dependencies to resolve and tasks to list as
// blocked; a checklist has no dependencies, so all of its tasks are ready.
const blockedEvery = 10

// components is how many component:* tags the tasks share, so that the
// plan has tasks to hold back.
const components = 8

// backlogTask is the one shape every tracker's task is written from.
type backlogTask struct {
	id, title, description string
	priority               int
	tags                   []string
	criteria               []string
	dep                    string // "" or the id it waits for
}

// backlogTasks are the n tasks of a backlog, ids made by id(i).
func backlogTasks(n int, id func(int) string) []backlogTask {
	out := make([]backlogTask, n)
	for i := range n {
		t := backlogTask{
			id:          id(i),
			title:       fmt.Sprintf("Write part %d of the exporter", i+1),
			description: fmt.Sprintf("Part %d writes its records as CSV, quoting fields with commas, and reports what it skipped.", i+1),
			priority:    i % 4,
			tags:        []string{fmt.Sprintf("component:c%d", i%components), "feature"},
			criteria:    []string{"`go test ./...`", fmt.Sprintf("part %d round-trips every record", i+1)},
		}
		if i%blockedEvery == blockedEvery-1 {
			t.dep = id(i - 1)
		}
		out[i] = t
	}
	return out
}

// WriteBacklog writes a backlog of n open tasks for the tracker kind (one
// of Sources) into the repository at dir, in the tracker's own files, and
// returns the autopilot.source section that reads it. Every tenth task
// waits for the one before it, except in a checklist; the same n always
// writes the same files.
//
// A beads backlog is written as the database of ralph's fake bd
// (internal/fakes/bd: .beads/fake.db.json), which it must be read with;
// the other trackers' files are theirs as the real programs write them.
func WriteBacklog(dir, kind string, n int) (Backlog, error) {
	switch kind {
	case "tk":
		return writeTk(dir, n)
	case "beads":
		return writeBeads(dir, n)
	case "prd":
		return writePRD(dir, n)
	case "checklist":
		return writeChecklist(dir, n)
	case "command":
		return writeCommand(dir, n)
	}
	return Backlog{}, fmt.Errorf("no backlog for the source %q: choose one of %s", kind, strings.Join(Sources, ", "))
}

func counts(n int, deps bool) Backlog {
	if !deps {
		return Backlog{Ready: n}
	}
	blocked := n / blockedEvery
	return Backlog{Ready: n - blocked, Blocked: blocked}
}

func idOf(prefix string) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s-%05d", prefix, i+1) }
}

// writeTk writes .tickets/<id>.md as tk writes a ticket.
func writeTk(dir string, n int) (Backlog, error) {
	tickets := filepath.Join(dir, ".tickets")
	if err := os.MkdirAll(tickets, 0o755); err != nil {
		return Backlog{}, err
	}
	for _, t := range backlogTasks(n, idOf("bl")) {
		var b strings.Builder
		fmt.Fprintf(&b, "---\nid: %s\nstatus: open\ndeps: [%s]\nlinks: []\ncreated: 2026-11-23T16:26:48Z\ntype: task\npriority: %d\nassignee: dev\ntags: [%s]\n---\n",
			t.id, t.dep, t.priority, strings.Join(t.tags, ", "))
		fmt.Fprintf(&b, "# %s\n\n%s\n\n## Acceptance Criteria\n\n", t.title, t.description)
		for _, c := range t.criteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		if err := os.WriteFile(filepath.Join(tickets, t.id+".md"), []byte(b.String()), 0o644); err != nil {
			return Backlog{}, err
		}
	}
	bl := counts(n, true)
	bl.Source = "  source:\n    type: tk\n"
	return bl, nil
}

// writeBeads writes the fake bd's database (and the files bd init makes).
func writeBeads(dir string, n int) (Backlog, error) {
	beads := filepath.Join(dir, ".beads")
	if err := os.MkdirAll(beads, 0o755); err != nil {
		return Backlog{}, err
	}
	type issue struct {
		ID                 string    `json:"id"`
		Title              string    `json:"title"`
		Description        string    `json:"description,omitempty"`
		AcceptanceCriteria string    `json:"acceptance_criteria,omitempty"`
		Status             string    `json:"status"`
		Priority           int       `json:"priority"`
		IssueType          string    `json:"issue_type"`
		CreatedAt          time.Time `json:"created_at"`
		UpdatedAt          time.Time `json:"updated_at"`
		StartedAt          time.Time `json:"started_at"`
		ClosedAt           time.Time `json:"closed_at"`
		Labels             []string  `json:"labels,omitempty"`
	}
	type dependency struct {
		IssueID     string `json:"issue_id"`
		DependsOnID string `json:"depends_on_id"`
		Type        string `json:"type"`
	}
	db := struct {
		Prefix string       `json:"prefix"`
		Issues []issue      `json:"issues"`
		Deps   []dependency `json:"dependencies"`
	}{Prefix: "bl", Issues: []issue{}, Deps: []dependency{}}
	for i, t := range backlogTasks(n, idOf("bl")) {
		at := Start.Add(time.Duration(i) * time.Second)
		db.Issues = append(db.Issues, issue{ID: t.id, Title: t.title, Description: t.description,
			AcceptanceCriteria: "- " + strings.Join(t.criteria, "\n- "), Status: "open", Priority: t.priority,
			IssueType: "task", CreatedAt: at, UpdatedAt: at, Labels: t.tags})
		if t.dep != "" {
			db.Deps = append(db.Deps, dependency{IssueID: t.id, DependsOnID: t.dep, Type: "blocks"})
		}
	}
	data, err := json.MarshalIndent(db, "", "  ")
	if err != nil {
		return Backlog{}, err
	}
	for name, content := range map[string][]byte{
		"fake.db.json":       append(data, '\n'),
		".gitignore":         []byte("embeddeddolt/\ndolt/\n*.db\nfake.db.json\n"),
		"interactions.jsonl": nil,
	} {
		if err := os.WriteFile(filepath.Join(beads, name), content, 0o644); err != nil {
			return Backlog{}, err
		}
	}
	bl := counts(n, true)
	bl.Source = "  source:\n    type: beads\n"
	return bl, nil
}

// writePRD writes prd.json.
func writePRD(dir string, n int) (Backlog, error) {
	type story struct {
		ID                 string   `json:"id"`
		Title              string   `json:"title"`
		Description        string   `json:"description"`
		AcceptanceCriteria []string `json:"acceptanceCriteria"`
		Priority           int      `json:"priority"`
		Passes             bool     `json:"passes"`
		Notes              string   `json:"notes"`
		Tags               []string `json:"tags"`
		DependsOn          []string `json:"dependsOn,omitempty"`
	}
	doc := struct {
		Project     string  `json:"project"`
		BranchName  string  `json:"branchName"`
		UserStories []story `json:"userStories"`
	}{Project: "exporter", BranchName: "ralph/exporter"}
	for _, t := range backlogTasks(n, idOf("US")) {
		st := story{ID: t.id, Title: t.title, Description: t.description, AcceptanceCriteria: t.criteria,
			Priority: t.priority, Tags: t.tags}
		if t.dep != "" {
			st.DependsOn = []string{t.dep}
		}
		doc.UserStories = append(doc.UserStories, st)
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Backlog{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "prd.json"), append(data, '\n'), 0o644); err != nil {
		return Backlog{}, err
	}
	bl := counts(n, true)
	bl.Source = "  source:\n    type: prd\n"
	return bl, nil
}

// writeChecklist writes TODO.md: a box per task, its description and its
// criteria as nested boxes under it.
func writeChecklist(dir string, n int) (Backlog, error) {
	f, err := os.Create(filepath.Join(dir, "TODO.md"))
	if err != nil {
		return Backlog{}, err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# Exporter\n\n")
	for _, t := range backlogTasks(n, idOf("task")) {
		fmt.Fprintf(w, "- [ ] %s\n  %s\n", t.title, t.description)
		for _, c := range t.criteria {
			fmt.Fprintf(w, "  - [ ] %s\n", c)
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return Backlog{}, err
	}
	if err := f.Close(); err != nil {
		return Backlog{}, err
	}
	bl := counts(n, false)
	bl.Source = "  source:\n    type: checklist\n"
	return bl, nil
}

// writeCommand writes tasks.jsonl, one task a line, which the command
// source lists with cat and closes with sed.
func writeCommand(dir string, n int) (Backlog, error) {
	type task struct {
		ID                 string   `json:"id"`
		Title              string   `json:"title"`
		Description        string   `json:"description"`
		Priority           int      `json:"priority"`
		Labels             []string `json:"labels"`
		AcceptanceCriteria []string `json:"acceptance_criteria"`
		Status             string   `json:"status"`
		Deps               []string `json:"deps,omitempty"`
	}
	f, err := os.Create(filepath.Join(dir, "tasks.jsonl"))
	if err != nil {
		return Backlog{}, err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, t := range backlogTasks(n, idOf("t")) {
		ct := task{ID: t.id, Title: t.title, Description: t.description, Priority: t.priority, Labels: t.tags,
			AcceptanceCriteria: t.criteria, Status: "open"}
		if t.dep != "" {
			ct.Deps = []string{t.dep}
		}
		if err := enc.Encode(ct); err != nil {
			_ = f.Close()
			return Backlog{}, err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return Backlog{}, err
	}
	if err := f.Close(); err != nil {
		return Backlog{}, err
	}
	bl := counts(n, true)
	bl.Source = "  source:\n    type: command\n    list: cat tasks.jsonl\n" +
		`    close: 'sed "/\"id\":\"$RALPH_TASK_ID\"/s/\"status\":\"[a-z_]*\"/\"status\":\"closed\"/" tasks.jsonl > tasks.tmp && mv tasks.tmp tasks.jsonl'` + "\n" +
		"    files: [tasks.jsonl]\n"
	return bl, nil
}
