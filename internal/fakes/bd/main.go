// Command bd is a faithful stand-in for beads' CLI (bd 1.0.5) in ralph's
// tests, where the real program, with its embedded Dolt database, is not
// installed. It keeps the same layout in the repository, prints the same
// JSON and text, and exits with the same statuses, for the subset of
// commands ralph and its tests use:
//
//	init [--prefix P]                   .beads/, its .gitignore, the database,
//	                                    .beads/interactions.jsonl; commits them
//	                                    when run in a git work tree, as bd does
//	create TITLE [-p N] [-d X] [--acceptance X] [-l|--labels a,b] [-t X]
//	       [-a X] [--notes X] [--json]  the new issue (with schema_version)
//	ready [--json] [-n|--limit N]       open issues with no open blocker
//	blocked [--json]                    open and in-progress issues with an
//	                                    open blocker, each with blocked_by_count
//	                                    and blocked_by (the blockers' ids)
//	list [--status S] [--json]          issues (not closed, unless --status)
//	show ID… [--json]                   an array of the issues
//	update ID… [-s|--status S] [--notes X] [--append-notes X] [--json]
//	close ID… [-r|--reason X] [--json]
//	dep add ID DEP                      ID depends on DEP (blocks)
//	--version
//
// Where the real bd keeps its database in .beads/embeddeddolt/, ignored by
// .beads/.gitignore, the fake keeps a JSON file, .beads/fake.db.json,
// ignored the same way; .beads/interactions.jsonl is tracked, and every
// change of status appends a field_change line to it, as bd's audit log
// does:
//
//	{"id":"int-…","kind":"field_change","created_at":"…","actor":"…",
//	 "issue_id":"…","extra":{"field":"status","new_value":"…","old_value":"…"}}
//
// Lists are bare arrays, as in 1.0.5; FAKE_BD_ENVELOPE=1 wraps them in
// {"schema_version": 1, "data": […]} as other versions do. An unknown id
// is reported on stderr ("Error fetching ID: no issue found matching
// \"ID\"") with exit status 1. Ids are the directory's name, '-' and three
// random characters; a part of an id that matches exactly one issue
// resolves to it. The actor is BD_ACTOR, else `git config user.name`, else
// USER.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	version   = "bd version 1.0.5 (dev)"
	dbName    = "fake.db.json"
	auditName = "interactions.jsonl"
	gitignore = `# Database files are not tracked: bd keeps them in Dolt, the fake in ` + dbName + `
embeddeddolt/
dolt/
*.db
` + dbName + `
`
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "Error: "+format+"\n", args...)
	return 1
}

// flags splits args into positionals and flags; names lists the flags
// that take a value.
func flags(args []string, names ...string) (pos []string, vals map[string]string, bools map[string]bool) {
	vals, bools = map[string]string{}, map[string]bool{}
	takes := map[string]bool{}
	for _, n := range names {
		takes[n] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case takes[name] && hasVal:
			vals[name] = val
		case takes[name] && i+1 < len(args):
			i++
			vals[name] = args[i]
		default:
			bools[name] = true
		}
	}
	return pos, vals, bools
}

func pick(vals map[string]string, names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := vals[n]; ok {
			return v, true
		}
	}
	return "", false
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Println("Usage: bd <command> [flags]")
		return 0
	}
	switch args[0] {
	case "--version", "version":
		fmt.Println(version)
		return 0
	case "init":
		return cmdInit(args[1:])
	}
	root, ok := findBeads()
	if !ok {
		return fail("no beads database found\nHint: run 'bd init' to create a database in the current directory")
	}
	db, err := load(root)
	if err != nil {
		return fail("%v", err)
	}
	switch args[0] {
	case "create":
		return db.create(args[1:])
	case "ready":
		return db.ready(args[1:])
	case "blocked":
		return db.blockedList(args[1:])
	case "list":
		return db.list(args[1:])
	case "show":
		return db.show(args[1:])
	case "update":
		return db.update(args[1:])
	case "close":
		return db.close(args[1:])
	case "dep":
		return db.dep(args[1:])
	default:
		return fail("unknown command %q for \"bd\"", args[0])
	}
}

// findBeads is BEADS_DIR, or the nearest .beads directory holding the
// fake's database above the current directory.
func findBeads() (string, bool) {
	if d := os.Getenv("BEADS_DIR"); d != "" {
		_, err := os.Stat(filepath.Join(d, dbName))
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".beads", dbName)); err == nil {
			return filepath.Join(d, ".beads"), true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func cmdInit(args []string) int {
	_, vals, _ := flags(args, "--prefix", "-p")
	wd, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	prefix, ok := pick(vals, "--prefix", "-p")
	if !ok {
		prefix = filepath.Base(wd)
	}
	dir := filepath.Join(wd, ".beads")
	if _, err := os.Stat(filepath.Join(dir, dbName)); err == nil {
		return fail("beads already initialized in %s", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	}
	d := &database{root: dir, Prefix: prefix, Issues: []*issue{}, Deps: []dependency{}}
	if err := d.save(); err != nil {
		return fail("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(gitignore), 0o644); err != nil {
		return fail("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, auditName), nil, 0o644); err != nil {
		return fail("%v", err)
	}
	fmt.Printf("\n✓ bd initialized successfully!\n\n  Database: %s\n  Issue prefix: %s\n  Issues will be named: %s-<hash> (e.g., %s-a3f2dd)\n\n",
		filepath.Join(".beads", "embeddeddolt"), prefix, prefix, prefix)
	// bd commits its own files when it is run in a git work tree.
	if exec.Command("git", "rev-parse", "--is-inside-work-tree").Run() == nil {
		if out, err := exec.Command("git", "add", ".beads").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "Warning: git add: %s\n", out)
		} else if out, err := exec.Command("git", "commit", "-q", "-m", "bd init: initialize beads issue tracking", "--", ".beads").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "Warning: git commit: %s\n", out)
		}
	}
	return 0
}

// issue is a stored issue.
type issue struct {
	ID                 string    `json:"id"`
	Title              string    `json:"title"`
	Description        string    `json:"description,omitempty"`
	AcceptanceCriteria string    `json:"acceptance_criteria,omitempty"`
	Notes              string    `json:"notes,omitempty"`
	Status             string    `json:"status"`
	Priority           int       `json:"priority"`
	IssueType          string    `json:"issue_type"`
	Assignee           string    `json:"assignee,omitempty"`
	Owner              string    `json:"owner,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	CreatedBy          string    `json:"created_by,omitempty"`
	UpdatedAt          time.Time `json:"updated_at"`
	StartedAt          time.Time `json:"started_at"`
	ClosedAt           time.Time `json:"closed_at"`
	CloseReason        string    `json:"close_reason,omitempty"`
	Labels             []string  `json:"labels,omitempty"`
}

type dependency struct {
	IssueID     string `json:"issue_id"`
	DependsOnID string `json:"depends_on_id"`
	Type        string `json:"type"`
}

type database struct {
	root   string
	Prefix string       `json:"prefix"`
	Issues []*issue     `json:"issues"`
	Deps   []dependency `json:"dependencies"`
}

func load(root string) (*database, error) {
	data, err := os.ReadFile(filepath.Join(root, dbName))
	if err != nil {
		return nil, err
	}
	d := &database{root: root}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("database %s: %w", filepath.Join(root, dbName), err)
	}
	return d, nil
}

func (d *database) save() error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(d.root, dbName)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ts formats a time as bd does (seconds; nothing when unset).
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fields are an issue's fields as bd prints them, in bd's order; the
// counts follow them.
type fields struct {
	ID                 string    `json:"id"`
	Title              string    `json:"title"`
	Description        string    `json:"description,omitempty"`
	AcceptanceCriteria string    `json:"acceptance_criteria,omitempty"`
	Notes              string    `json:"notes,omitempty"`
	Status             string    `json:"status"`
	Priority           int       `json:"priority"`
	IssueType          string    `json:"issue_type"`
	Assignee           string    `json:"assignee,omitempty"`
	Owner              string    `json:"owner,omitempty"`
	CreatedAt          string    `json:"created_at"`
	CreatedBy          string    `json:"created_by,omitempty"`
	UpdatedAt          string    `json:"updated_at"`
	StartedAt          string    `json:"started_at,omitempty"`
	ClosedAt           string    `json:"closed_at,omitempty"`
	CloseReason        string    `json:"close_reason,omitempty"`
	Labels             []string  `json:"labels,omitempty"`
	Dependencies       []depView `json:"dependencies,omitempty"`
}

// view is an issue as bd prints it in lists and updates; the counts are
// printed by ready and list (dependency first).
type view struct {
	fields
	DependencyCount *int `json:"dependency_count,omitempty"`
	DependentCount  *int `json:"dependent_count,omitempty"`
	CommentCount    *int `json:"comment_count,omitempty"`
}

// showView is bd show's order of the counts (dependent first).
type showView struct {
	fields
	DependentCount  int `json:"dependent_count"`
	DependencyCount int `json:"dependency_count"`
	CommentCount    int `json:"comment_count"`
}

// depView is an issue depended on, as bd show lists it.
type depView struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Status         string `json:"status"`
	Priority       int    `json:"priority"`
	IssueType      string `json:"issue_type"`
	DependencyType string `json:"dependency_type"`
}

func (d *database) view(is *issue, counts bool) view {
	v := view{fields: fields{
		ID: is.ID, Title: is.Title, Description: is.Description, AcceptanceCriteria: is.AcceptanceCriteria,
		Notes: is.Notes, Status: is.Status, Priority: is.Priority, IssueType: is.IssueType,
		Assignee: is.Assignee, Owner: is.Owner, CreatedAt: ts(is.CreatedAt), CreatedBy: is.CreatedBy,
		UpdatedAt: ts(is.UpdatedAt), StartedAt: ts(is.StartedAt), ClosedAt: ts(is.ClosedAt),
		CloseReason: is.CloseReason, Labels: is.Labels,
	}}
	if counts {
		deps, dependents := d.counts(is.ID)
		zero := 0
		v.DependencyCount, v.DependentCount, v.CommentCount = &deps, &dependents, &zero
	}
	return v
}

func (d *database) counts(id string) (deps, dependents int) {
	for _, dep := range d.Deps {
		if dep.IssueID == id {
			deps++
		}
		if dep.DependsOnID == id {
			dependents++
		}
	}
	return deps, dependents
}

func (d *database) get(id string) *issue {
	for _, is := range d.Issues {
		if is.ID == id {
			return is
		}
	}
	return nil
}

// resolve finds an issue by its id or, as bd does, by a part of it that
// only one id contains.
func (d *database) resolve(id string) (*issue, error) {
	if is := d.get(id); is != nil {
		return is, nil
	}
	var found []*issue
	for _, is := range d.Issues {
		if strings.Contains(is.ID, id) {
			found = append(found, is)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("no issue found matching %q", id)
	default:
		return nil, fmt.Errorf("ambiguous ID %q matches %d issues", id, len(found))
	}
}

// blocked reports whether an issue has a blocking dependency not closed.
func (d *database) blocked(id string) bool {
	for _, dep := range d.Deps {
		if dep.IssueID == id && dep.Type == "blocks" {
			if t := d.get(dep.DependsOnID); t == nil || t.Status != "closed" {
				return true
			}
		}
	}
	return false
}

// printJSON prints v as bd does: indented by two spaces; a list in an
// envelope when FAKE_BD_ENVELOPE is set.
func printJSON(v any, list bool) {
	if list && os.Getenv("FAKE_BD_ENVELOPE") != "" {
		v = struct {
			SchemaVersion int `json:"schema_version"`
			Data          any `json:"data"`
		}{1, v}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	_, _ = os.Stdout.Write(b.Bytes())
}

func actor() string {
	if a := os.Getenv("BD_ACTOR"); a != "" {
		return a
	}
	if out, err := exec.Command("git", "config", "user.name").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		return string(bytes.TrimSpace(out))
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

func owner() string {
	out, err := exec.Command("git", "config", "user.email").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

// audit appends a field_change line to .beads/interactions.jsonl.
func (d *database) audit(issueID, field, oldValue, newValue, reason string) error {
	if oldValue == newValue {
		return nil
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	extra := map[string]any{"field": field, "old_value": oldValue, "new_value": newValue}
	if reason != "" {
		extra["reason"] = reason
	}
	line, err := json.Marshal(struct {
		ID        string         `json:"id"`
		Kind      string         `json:"kind"`
		CreatedAt time.Time      `json:"created_at"`
		Actor     string         `json:"actor,omitempty"`
		IssueID   string         `json:"issue_id,omitempty"`
		Extra     map[string]any `json:"extra,omitempty"`
	}{"int-" + hex.EncodeToString(id[:]), "field_change", time.Now().UTC(), actor(), issueID, extra})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(d.root, auditName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func newSuffix() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	var r [3]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		r[i] = alphabet[int(r[i])%len(alphabet)]
	}
	return string(r[:])
}

func priorityOf(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(s), "P"))
	if err != nil || p < 0 || p > 4 {
		return 0, fmt.Errorf("invalid priority %q (expected 0-4 or P0-P4)", s)
	}
	return p, nil
}

func (d *database) create(args []string) int {
	pos, vals, bools := flags(args, "-p", "--priority", "-d", "--description", "--acceptance", "-l", "--labels",
		"-t", "--type", "-a", "--assignee", "--notes", "--design", "--title")
	title, _ := pick(vals, "--title")
	if title == "" {
		title = strings.Join(pos, " ")
	}
	if title == "" {
		return fail("title required")
	}
	now := time.Now().UTC()
	is := &issue{Title: title, Status: "open", Priority: 2, IssueType: "task", CreatedAt: now, UpdatedAt: now,
		CreatedBy: actor(), Owner: owner()}
	if p, ok := pick(vals, "-p", "--priority"); ok {
		var err error
		if is.Priority, err = priorityOf(p); err != nil {
			return fail("%v", err)
		}
	}
	is.Description, _ = pick(vals, "-d", "--description")
	is.AcceptanceCriteria, _ = pick(vals, "--acceptance")
	is.Notes, _ = pick(vals, "--notes")
	is.Assignee, _ = pick(vals, "-a", "--assignee")
	if t, ok := pick(vals, "-t", "--type"); ok {
		is.IssueType = t
	}
	if l, ok := pick(vals, "-l", "--labels"); ok {
		for _, x := range strings.Split(l, ",") {
			if x = strings.TrimSpace(x); x != "" {
				is.Labels = append(is.Labels, x)
			}
		}
	}
	for {
		is.ID = d.Prefix + "-" + newSuffix()
		if d.get(is.ID) == nil {
			break
		}
	}
	d.Issues = append(d.Issues, is)
	if err := d.save(); err != nil {
		return fail("%v", err)
	}
	if bools["--json"] {
		// A single object is printed with its keys sorted and the schema
		// version among them.
		var m map[string]any
		b, _ := json.Marshal(d.view(is, false))
		_ = json.Unmarshal(b, &m)
		m["schema_version"] = 1
		m["created_at"] = is.CreatedAt.Format(time.RFC3339Nano)
		m["updated_at"] = is.UpdatedAt.Format(time.RFC3339Nano)
		printJSON(m, false)
		return 0
	}
	fmt.Printf("✓ Created issue: %s\n  Title: %s\n  Priority: P%d\n  Status: %s\n", is.ID, is.Title, is.Priority, is.Status)
	return 0
}

func sortIssues(list []*issue) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Priority != list[j].Priority {
			return list[i].Priority < list[j].Priority
		}
		if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
			return list[i].CreatedAt.Before(list[j].CreatedAt)
		}
		return list[i].ID < list[j].ID
	})
}

var statusIcon = map[string]string{"open": "○", "in_progress": "◐", "blocked": "●", "closed": "✓", "deferred": "❄"}

func (d *database) ready(args []string) int {
	_, vals, bools := flags(args, "-n", "--limit", "-s", "--sort", "-l", "--label", "-t", "--type", "-a", "--assignee")
	limit := 10
	if l, ok := pick(vals, "-n", "--limit"); ok {
		n, err := strconv.Atoi(l)
		if err != nil {
			return fail("invalid argument %q for \"-n, --limit\" flag", l)
		}
		limit = n
	}
	var list []*issue
	for _, is := range d.Issues {
		if is.Status == "open" && !d.blocked(is.ID) {
			list = append(list, is)
		}
	}
	sortIssues(list)
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	if bools["--json"] {
		d.printList(list, true)
		return 0
	}
	if len(list) == 0 {
		fmt.Printf("\n✨ No open issues\n\n")
		return 0
	}
	d.printList(list, false)
	fmt.Printf("\n%s\nReady: %d issues with no active blockers\n\nStatus: ○ open  ◐ in_progress  ● blocked  ✓ closed  ❄ deferred\n",
		strings.Repeat("-", 80), len(list))
	return 0
}

// blockedView is an issue as bd blocked lists it: bd's BlockedIssue.
type blockedView struct {
	fields
	BlockedByCount int      `json:"blocked_by_count"`
	BlockedBy      []string `json:"blocked_by"`
}

func (d *database) blockedList(args []string) int {
	_, _, bools := flags(args)
	var views []blockedView
	var list []*issue
	for _, is := range d.Issues {
		if (is.Status == "open" || is.Status == "in_progress") && d.blocked(is.ID) {
			list = append(list, is)
		}
	}
	sortIssues(list)
	for _, is := range list {
		var by []string
		for _, dep := range d.Deps {
			if dep.IssueID == is.ID && dep.Type == "blocks" {
				if t := d.get(dep.DependsOnID); t == nil || t.Status != "closed" {
					by = append(by, dep.DependsOnID)
				}
			}
		}
		views = append(views, blockedView{fields: d.view(is, false).fields, BlockedByCount: len(by), BlockedBy: by})
	}
	if bools["--json"] {
		if views == nil {
			views = []blockedView{}
		}
		printJSON(views, true)
		return 0
	}
	for _, v := range views {
		fmt.Printf("%s [P%d] %s\n  Blocked by %d open dependencies: %v\n", v.ID, v.Priority, v.Title, v.BlockedByCount, v.BlockedBy)
	}
	return 0
}

func (d *database) list(args []string) int {
	_, vals, bools := flags(args, "-s", "--status", "-n", "--limit", "-l", "--label")
	status, hasStatus := pick(vals, "-s", "--status")
	var list []*issue
	for _, is := range d.Issues {
		if hasStatus && is.Status == status || !hasStatus && is.Status != "closed" || bools["--all"] {
			list = append(list, is)
		}
	}
	sortIssues(list)
	d.printList(list, bools["--json"])
	return 0
}

// printList prints issues as ready and list do: as views with their
// counts, or a line each.
func (d *database) printList(list []*issue, jsonOut bool) {
	if jsonOut {
		views := make([]view, 0, len(list))
		for _, is := range list {
			views = append(views, d.view(is, true))
		}
		printJSON(views, true)
		return
	}
	for _, is := range list {
		fmt.Printf("%s %s ● P%d %s\n", statusIcon[is.Status], is.ID, is.Priority, is.Title)
	}
}

func (d *database) show(args []string) int {
	pos, _, bools := flags(args)
	if len(pos) == 0 {
		return fail("issue ID required")
	}
	var views []showView
	status := d.each(pos, "fetching", func(_ string, is *issue) bool {
		sv := showView{fields: d.view(is, false).fields}
		for _, dep := range d.Deps {
			if dep.IssueID == is.ID {
				if t := d.get(dep.DependsOnID); t != nil {
					sv.Dependencies = append(sv.Dependencies, depView{t.ID, t.Title, t.Status, t.Priority, t.IssueType, dep.Type})
				}
			}
		}
		sv.DependencyCount, sv.DependentCount = d.counts(is.ID)
		views = append(views, sv)
		return true
	})
	if len(views) == 0 {
		return status
	}
	if bools["--json"] {
		printJSON(views, true)
		return status
	}
	for _, v := range views {
		fmt.Printf("%s %s · %s   [● P%d · %s]\n", statusIcon[v.Status], v.ID, v.Title, v.Priority, strings.ToUpper(v.Status))
		if v.Description != "" {
			fmt.Printf("\nDESCRIPTION\n%s\n", v.Description)
		}
		if v.AcceptanceCriteria != "" {
			fmt.Printf("\nACCEPTANCE CRITERIA\n%s\n", v.AcceptanceCriteria)
		}
		if v.Notes != "" {
			fmt.Printf("\nNOTES\n%s\n", v.Notes)
		}
		fmt.Println()
	}
	return status
}

// each calls fn on each id and the issue it resolves to, in order, reporting an id
// that resolves to none as bd does ("Error <verb> <id>: …"); the status is 1
// when an id did not resolve or fn returned false.
func (d *database) each(ids []string, verb string, fn func(id string, is *issue) bool) int {
	status := 0
	for _, id := range ids {
		is, err := d.resolve(id)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error %s %s: %v\n", verb, id, err)
			status = 1
			continue
		}
		if !fn(id, is) {
			status = 1
		}
	}
	return status
}

// change applies a status, notes or close to the issues named, printing
// them as bd does.
func (d *database) change(ids []string, jsonOut bool, apply func(*issue) error, text func(*issue) string) int {
	if len(ids) == 0 {
		return fail("no issue ID provided")
	}
	var changed []view
	status := d.each(ids, "resolving", func(id string, is *issue) bool {
		if err := apply(is); err != nil {
			fmt.Fprintf(os.Stderr, "Error updating %s: %v\n", id, err)
			return false
		}
		is.UpdatedAt = time.Now().UTC()
		changed = append(changed, d.view(is, false))
		if !jsonOut {
			fmt.Println(text(is))
		}
		return true
	})
	if err := d.save(); err != nil {
		return fail("%v", err)
	}
	if jsonOut && len(changed) > 0 {
		printJSON(changed, true)
	}
	return status
}

var statuses = []string{"open", "in_progress", "blocked", "deferred", "closed"}

func (d *database) setStatus(is *issue, status, reason string) error {
	valid := false
	for _, s := range statuses {
		valid = valid || s == status
	}
	if !valid {
		return fmt.Errorf("invalid status %q", status)
	}
	old := is.Status
	is.Status = status
	now := time.Now().UTC()
	switch status {
	case "in_progress":
		if is.StartedAt.IsZero() {
			is.StartedAt = now
		}
	case "closed":
		is.ClosedAt, is.CloseReason = now, reason
	default:
		is.ClosedAt, is.CloseReason = time.Time{}, ""
	}
	return d.audit(is.ID, "status", old, status, reason)
}

func (d *database) update(args []string) int {
	pos, vals, bools := flags(args, "-s", "--status", "--notes", "--append-notes", "-p", "--priority", "--title", "-a", "--assignee")
	notes, hasNotes := vals["--notes"]
	appendNotes, hasAppend := vals["--append-notes"]
	if hasNotes && hasAppend {
		return fail("cannot specify both --notes and --append-notes")
	}
	status, hasStatus := pick(vals, "-s", "--status")
	return d.change(pos, bools["--json"], func(is *issue) error {
		if hasStatus {
			if err := d.setStatus(is, status, ""); err != nil {
				return err
			}
		}
		if hasNotes {
			is.Notes = notes
		}
		if hasAppend {
			if is.Notes != "" {
				is.Notes += "\n"
			}
			is.Notes += appendNotes
		}
		if p, ok := pick(vals, "-p", "--priority"); ok {
			pr, err := priorityOf(p)
			if err != nil {
				return err
			}
			is.Priority = pr
		}
		if t, ok := vals["--title"]; ok {
			is.Title = t
		}
		if a, ok := pick(vals, "-a", "--assignee"); ok {
			is.Assignee = a
		}
		return nil
	}, func(is *issue) string { return "✓ Updated issue: " + is.ID })
}

func (d *database) close(args []string) int {
	pos, vals, bools := flags(args, "-r", "--reason")
	reason, _ := pick(vals, "-r", "--reason")
	if reason == "" {
		reason = "Closed"
	}
	return d.change(pos, bools["--json"], func(is *issue) error {
		return d.setStatus(is, "closed", reason)
	}, func(is *issue) string { return fmt.Sprintf("✓ Closed %s: %s", is.ID, reason) })
}

func (d *database) dep(args []string) int {
	if len(args) < 1 || args[0] != "add" {
		return fail("usage: bd dep add <issue> <depends-on>")
	}
	pos, vals, _ := flags(args[1:], "-t", "--type")
	if len(pos) != 2 {
		return fail("usage: bd dep add <issue> <depends-on>")
	}
	from, err := d.resolve(pos[0])
	if err != nil {
		return fail("resolving %s: %v", pos[0], err)
	}
	to, err := d.resolve(pos[1])
	if err != nil {
		return fail("resolving %s: %v", pos[1], err)
	}
	typ, ok := pick(vals, "-t", "--type")
	if !ok {
		typ = "blocks"
	}
	for _, dep := range d.Deps {
		if dep.IssueID == from.ID && dep.DependsOnID == to.ID {
			return fail("dependency %s -> %s already exists", from.ID, to.ID)
		}
	}
	d.Deps = append(d.Deps, dependency{from.ID, to.ID, typ})
	if err := d.save(); err != nil {
		return fail("%v", err)
	}
	fmt.Printf("✓ Added dependency: %s (%s) depends on %s (%s) (%s)\n", from.ID, from.Title, to.ID, to.Title, typ)
	return 0
}
