// Command tk is a faithful stand-in for the ticket CLI (wedow/ticket, `tk`)
// in ralph's tests, where the real bash script is not installed. It reads
// and writes the same files, .tickets/<id>.md (found by walking up from the
// current directory, or TICKETS_DIR), in the same format, and prints what
// the real one prints, byte for byte, for the subset of commands ralph and
// its tests use:
//
//	create [title] [-d|--description X] [--design X] [--acceptance X]
//	       [-t|--type X] [-p|--priority N] [-a|--assignee X]
//	       [--external-ref X] [--parent ID] [--tags a,b]   prints the new id
//	start|close|reopen ID, status ID STATUS      "Updated ID -> STATUS"
//	dep ID DEP                                   "Added dependency: ID -> DEP"
//	add-note ID [TEXT]                           "Note added to ID"
//	ready, blocked [-a X] [-T X]; closed [--limit=N]
//	show ID                                      the file, then Blockers, Blocking, Children, Linked
//	help, --help
//
// Like the real one it resolves a part of an id ("qha" for "dr-qhah") when
// exactly one ticket's file name contains it, rewrites every line of a
// ticket that starts with the field it updates (front matter or not), and
// reports an unknown ticket as "Error: ticket 'X' not found" with exit
// status 1. The assignee of a new ticket is `git config user.name`, when
// there is one.
package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const help = `tk - minimal ticket system with dependency tracking

Usage: tk <command> [args]

Commands:
  create [title] [options] Create ticket, prints ID
    -d, --description      Description text
    --design               Design notes
    --acceptance           Acceptance criteria
    -t, --type             Type (bug|feature|task|epic|chore) [default: task]
    -p, --priority         Priority 0-4, 0=highest [default: 2]
    -a, --assignee         Assignee
    --external-ref         External reference (e.g., gh-123, JIRA-456)
    --parent               Parent ticket ID
    --tags                 Comma-separated tags (e.g., --tags ui,backend,urgent)
  start <id>               Set status to in_progress
  close <id>               Set status to closed
  reopen <id>              Set status to open
  status <id> <status>     Update status (open|in_progress|closed)
  dep <id> <dep-id>        Add dependency (id depends on dep-id)
  dep tree [--full] <id>   Show dependency tree (--full disables dedup)
  dep cycle                Find dependency cycles in open tickets
  undep <id> <dep-id>      Remove dependency
  link <id> <id> [id...]   Link tickets together (symmetric)
  unlink <id> <target-id>  Remove link between tickets
  ready [-a X] [-T X]      List open/in-progress tickets with deps resolved
  blocked [-a X] [-T X]    List open/in-progress tickets with unresolved deps
  closed [--limit=N] [-a X] [-T X] List recently closed tickets (default 20, by mtime)
  show <id>                Display ticket
  add-note <id> [text]     Append timestamped note (or pipe via stdin)
  super <cmd> [args]       Bypass plugins, run built-in command directly

Use 'super' to bypass plugins. Plugins receive TICKETS_DIR and TK_SCRIPT
env vars; use '$TK_SCRIPT super <cmd>' to call built-ins.

Plugin descriptions: comment '# tk-plugin: text' or --tk-describe flag

Tickets stored as markdown files in .tickets/
Supports partial ID matching (e.g., 'tk show 5c4' matches 'nw-5c46')
`

var validStatuses = []string{"open", "in_progress", "closed"}

func main() {
	os.Exit(run(os.Args[1:]))
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Print(help)
		return 0
	}
	cmd, rest := args[0], args[1:]
	if cmd == "super" && len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "help", "--help", "-h":
		fmt.Print(help)
		return 0
	case "create":
		return create(rest)
	case "start":
		return setStatus(rest, "in_progress")
	case "close":
		return setStatus(rest, "closed")
	case "reopen":
		return setStatus(rest, "open")
	case "status":
		if len(rest) < 2 {
			return fail("Usage: tk status <id> <status>")
		}
		if !contains(validStatuses, rest[1]) {
			return fail("Error: invalid status '%s'. Must be one of: %s", rest[1], strings.Join(validStatuses, " "))
		}
		return setStatus(rest[:1], rest[1])
	case "dep":
		return dep(rest)
	case "add-note":
		return addNote(rest)
	case "ready":
		return list(rest, "ready")
	case "blocked":
		return list(rest, "blocked")
	case "closed":
		return closed(rest)
	case "show":
		return show(rest)
	default:
		fmt.Fprintf(os.Stderr, "Unknown command: %s\n", cmd)
		fmt.Fprint(os.Stderr, help)
		return 1
	}
}

// ticketsDir is TICKETS_DIR, or the nearest .tickets directory above the
// current one; found is false when there is none (create then makes
// ./.tickets).
func ticketsDir() (dir string, found bool) {
	if d := os.Getenv("TICKETS_DIR"); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return ".tickets", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".tickets")); err == nil && fi.IsDir() {
			return filepath.Join(d, ".tickets"), true
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, ".tickets"), false
		}
	}
}

// ticketPath resolves an id, exactly or as a part of one file name.
func ticketPath(id string) (string, bool) {
	dir, _ := ticketsDir()
	exact := filepath.Join(dir, id+".md")
	if _, err := os.Stat(exact); err == nil {
		return exact, true
	}
	var matches []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") && strings.Contains(e.Name(), id) {
			matches = append(matches, filepath.Join(dir, e.Name()))
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], true
	case 0:
		fmt.Fprintf(os.Stderr, "Error: ticket '%s' not found\n", id)
	default:
		fmt.Fprintf(os.Stderr, "Error: ambiguous ID '%s' matches multiple tickets\n", id)
	}
	return "", false
}

func idOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ".md") }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func create(args []string) int {
	var title, description, design, acceptance, assignee, externalRef, parent, tags string
	priority, typ := "2", "task"
	if out, err := exec.Command("git", "config", "user.name").Output(); err == nil {
		assignee = strings.TrimSpace(string(out))
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a {
		case "-d", "--description":
			description = val()
		case "--design":
			design = val()
		case "--acceptance":
			acceptance = val()
		case "-p", "--priority":
			priority = val()
		case "-t", "--type":
			typ = val()
		case "-a", "--assignee":
			assignee = val()
		case "--external-ref":
			externalRef = val()
		case "--parent":
			parent = val()
		case "--tags":
			tags = val()
		default:
			if strings.HasPrefix(a, "-") {
				return fail("Unknown option: %s", a)
			}
			title = a
		}
	}
	if title == "" {
		return fail("Error: title is required")
	}
	if !contains([]string{"0", "1", "2", "3", "4"}, priority) {
		return fail("Error: invalid priority '%s'. Must be one of: 0 1 2 3 4", priority)
	}
	dir, _ := ticketsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("Error: %v", err)
	}
	var id string
	for {
		id = newID()
		if _, err := os.Stat(filepath.Join(dir, id+".md")); err != nil {
			break
		}
	}
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "id: %s\nstatus: open\ndeps: []\nlinks: []\n", id)
	fmt.Fprintf(&b, "created: %s\ntype: %s\npriority: %s\n", time.Now().UTC().Format("2006-01-02T15:04:05Z"), typ, priority)
	if assignee != "" {
		fmt.Fprintf(&b, "assignee: %s\n", assignee)
	}
	if externalRef != "" {
		fmt.Fprintf(&b, "external-ref: %s\n", externalRef)
	}
	if parent != "" {
		fmt.Fprintf(&b, "parent: %s\n", parent)
	}
	if tags != "" {
		fmt.Fprintf(&b, "tags: [%s]\n", strings.ReplaceAll(tags, ",", ", "))
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "# %s\n\n", title)
	if description != "" {
		fmt.Fprintf(&b, "%s\n\n", description)
	}
	if design != "" {
		fmt.Fprintf(&b, "## Design\n\n%s\n\n", design)
	}
	if acceptance != "" {
		fmt.Fprintf(&b, "## Acceptance Criteria\n\n%s\n\n", acceptance)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".md"), []byte(b.String()), 0o644); err != nil {
		return fail("Error: %v", err)
	}
	fmt.Println(id)
	return 0
}

// newID is the current directory's initials (of its '-' and '_' separated
// words; its first 3 characters when there are none) and 4 random
// characters.
func newID() string {
	wd, _ := os.Getwd()
	name := filepath.Base(wd)
	prefix := ""
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		prefix += w[:1]
	}
	if prefix == "" {
		prefix = name
		if len(prefix) > 3 {
			prefix = prefix[:3]
		}
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var r [4]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		r[i] = alphabet[int(r[i])%len(alphabet)]
	}
	return prefix + "-" + string(r[:])
}

// updateField rewrites every line that starts with "field:", as tk's sed
// does; when there is none it inserts the field after the first ---.
func updateField(path, field, value string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(l, field+":") {
			nl := ""
			if strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			lines[i] = field + ": " + value + nl
			found = true
		}
	}
	if !found {
		for i, l := range lines {
			if strings.TrimRight(l, "\n") == "---" {
				lines = append(lines[:i+1], append([]string{field + ": " + value + "\n"}, lines[i+1:]...)...)
				break
			}
		}
	}
	return writeAtomic(path, []byte(strings.Join(lines, "")))
}

func writeAtomic(path string, data []byte) error {
	tmp := fmt.Sprintf("%s.tmp.%d", path, os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func setStatus(args []string, status string) int {
	if len(args) < 1 {
		return fail("Usage: tk <start|close|reopen> <id>")
	}
	path, ok := ticketPath(args[0])
	if !ok {
		return 1
	}
	if err := updateField(path, "status", status); err != nil {
		return fail("Error: %v", err)
	}
	fmt.Printf("Updated %s -> %s\n", idOf(path), status)
	return 0
}

func dep(args []string) int {
	if len(args) < 2 || args[0] == "tree" || args[0] == "cycle" {
		return fail("Usage: tk dep <id> <dependency-id>")
	}
	path, ok := ticketPath(args[0])
	if !ok {
		return 1
	}
	if _, ok := ticketPath(args[1]); !ok {
		return 1
	}
	t, err := readTicket(path)
	if err != nil {
		return fail("Error: %v", err)
	}
	depID := args[1]
	if strings.Contains(t.field("deps"), depID) {
		fmt.Println("Dependency already exists")
		return 0
	}
	deps := "[" + depID + "]"
	if cur := t.field("deps"); cur != "[]" && cur != "" {
		deps = strings.Replace(cur, "]", ", "+depID+"]", 1)
	}
	if err := updateField(path, "deps", deps); err != nil {
		return fail("Error: %v", err)
	}
	fmt.Printf("Added dependency: %s -> %s\n", idOf(path), depID)
	return 0
}

func addNote(args []string) int {
	if len(args) < 1 {
		return fail("Usage: tk add-note <id> [note text]")
	}
	path, ok := ticketPath(args[0])
	if !ok {
		return 1
	}
	note := strings.Join(args[1:], " ")
	if len(args) == 1 {
		if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
			b, _ := io.ReadAll(os.Stdin)
			note = strings.TrimRight(string(b), "\n")
		} else {
			return fail("Error: no note provided")
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail("Error: %v", err)
	}
	var b strings.Builder
	hasNotes := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "## Notes") {
			hasNotes = true
		}
	}
	if !hasNotes {
		b.WriteString("\n## Notes\n")
	}
	fmt.Fprintf(&b, "\n**%s**\n\n%s\n", time.Now().UTC().Format("2006-01-02T15:04:05Z"), note)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fail("Error: %v", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close()
		return fail("Error: %v", err)
	}
	if err := f.Close(); err != nil {
		return fail("Error: %v", err)
	}
	fmt.Printf("Note added to %s\n", idOf(path))
	return 0
}

// ticket is a ticket file's front matter and title.
type ticket struct {
	path   string
	fields map[string]string
	title  string
	lines  []string
	mtime  time.Time
}

func (t ticket) field(k string) string { return t.fields[k] }

func (t ticket) list(k string) []string {
	v := strings.Trim(t.fields[k], "[]")
	var out []string
	for _, it := range strings.Split(v, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

func (t ticket) priority() int {
	if p, err := strconv.Atoi(t.fields["priority"]); err == nil {
		return p
	}
	return 2
}

func readTicket(path string) (ticket, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ticket{}, err
	}
	fi, _ := os.Stat(path)
	t := ticket{path: path, fields: map[string]string{}}
	if fi != nil {
		t.mtime = fi.ModTime()
	}
	text := strings.TrimSuffix(string(data), "\n")
	t.lines = strings.Split(text, "\n")
	front := 0
	for _, l := range t.lines {
		if l == "---" {
			front++
			continue
		}
		if front == 1 {
			if k, v, ok := strings.Cut(l, ": "); ok {
				t.fields[k] = v
			} else if k, ok := strings.CutSuffix(l, ":"); ok {
				t.fields[k] = ""
			}
		} else if front >= 2 && t.title == "" && strings.HasPrefix(l, "# ") {
			t.title = l[2:]
		}
	}
	return t, nil
}

func allTickets() []ticket {
	dir, found := ticketsDir()
	if !found {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	var out []ticket
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		t, err := readTicket(filepath.Join(dir, e.Name()))
		if err == nil && t.field("id") != "" {
			out = append(out, t)
		}
	}
	return out
}

func byID(ts []ticket) map[string]ticket {
	m := map[string]ticket{}
	for _, t := range ts {
		m[t.field("id")] = t
	}
	return m
}

// filters reads -a X, --assignee=X, -T X, --tag=X and --limit=N.
func filters(args []string) (assignee, tag string, limit int) {
	limit = 20
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-a" && i+1 < len(args):
			i++
			assignee = args[i]
		case a == "-T" && i+1 < len(args):
			i++
			tag = args[i]
		case strings.HasPrefix(a, "--assignee="):
			assignee = strings.TrimPrefix(a, "--assignee=")
		case strings.HasPrefix(a, "--tag="):
			tag = strings.TrimPrefix(a, "--tag=")
		case strings.HasPrefix(a, "--limit="):
			if n, err := strconv.Atoi(strings.TrimPrefix(a, "--limit=")); err == nil {
				limit = n
			}
		}
	}
	return assignee, tag, limit
}

func (t ticket) matches(assignee, tag string) bool {
	if assignee != "" && t.field("assignee") != assignee {
		return false
	}
	return tag == "" || contains(t.list("tags"), tag)
}

// list prints tk ready or tk blocked: open and in_progress tickets whose
// deps are all closed (ready) or not (blocked), by priority then id.
func list(args []string, which string) int {
	assignee, tag, _ := filters(args)
	all := allTickets()
	ids := byID(all)
	type row struct {
		t        ticket
		blockers []string
	}
	var rows []row
	for _, t := range all {
		if s := t.field("status"); s != "open" && s != "in_progress" {
			continue
		}
		if !t.matches(assignee, tag) {
			continue
		}
		var blockers []string
		for _, d := range t.list("deps") {
			if ids[d].field("status") != "closed" {
				blockers = append(blockers, d)
			}
		}
		if (which == "ready") == (len(blockers) == 0) {
			rows = append(rows, row{t, blockers})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		pi, pj := rows[i].t.priority(), rows[j].t.priority()
		if pi != pj {
			return pi < pj
		}
		return rows[i].t.field("id") < rows[j].t.field("id")
	})
	for _, r := range rows {
		line := fmt.Sprintf("%-8s [P%d][%s] - %s", r.t.field("id"), r.t.priority(), r.t.field("status"), r.t.title)
		if which == "blocked" {
			line += " <- [" + strings.Join(r.blockers, ", ") + "]"
		}
		fmt.Println(line)
	}
	return 0
}

func closed(args []string) int {
	assignee, tag, limit := filters(args)
	all := allTickets()
	sort.SliceStable(all, func(i, j int) bool { return all[i].mtime.After(all[j].mtime) })
	n := 0
	for _, t := range all {
		if s := t.field("status"); (s == "closed" || s == "done") && t.matches(assignee, tag) && n < limit {
			fmt.Printf("%-8s [%s] - %s\n", t.field("id"), s, t.title)
			n++
		}
	}
	return 0
}

func show(args []string) int {
	if len(args) < 1 {
		return fail("Usage: tk show <id>")
	}
	path, ok := ticketPath(args[0])
	if !ok {
		return 1
	}
	target, err := readTicket(path)
	if err != nil {
		return fail("Error: %v", err)
	}
	id := idOf(path)
	all := allTickets()
	ids := byID(all)
	sort.Slice(all, func(i, j int) bool { return all[i].field("id") < all[j].field("id") })
	for _, l := range target.lines {
		if strings.HasPrefix(l, "parent:") {
			p := strings.TrimSpace(strings.TrimPrefix(l, "parent:"))
			if pt, ok := ids[p]; ok {
				l += "  # " + pt.title
			}
		}
		fmt.Println(l)
	}
	section := func(name string, list []string) {
		if len(list) == 0 {
			return
		}
		fmt.Printf("\n## %s\n\n", name)
		for _, x := range list {
			fmt.Printf("- %s [%s] %s\n", x, ids[x].field("status"), ids[x].title)
		}
	}
	var blockers, blocking, children []string
	for _, d := range target.list("deps") {
		if ids[d].field("status") != "closed" {
			blockers = append(blockers, d)
		}
	}
	for _, t := range all {
		if contains(t.list("deps"), id) && t.field("status") != "closed" {
			blocking = append(blocking, t.field("id"))
		}
		if strings.TrimSpace(strings.SplitN(t.field("parent"), "#", 2)[0]) == id {
			children = append(children, t.field("id"))
		}
	}
	section("Blockers", blockers)
	section("Blocking", blocking)
	section("Children", children)
	section("Linked", target.list("links"))
	return 0
}
