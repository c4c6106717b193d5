package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// tkSource is the ticket CLI (tk): markdown tickets under .tickets/. What
// is ready, blocked or shown is tk's to say (tk ready, tk blocked, tk
// show), so the user's tk, with its plugins, stays the source of truth;
// the text of the tickets tk ready lists is read from their files.
//
//   - Ready is `tk ready` (open and in_progress tickets whose deps are all
//     closed, by priority then id), each ticket's tags, description and
//     acceptance criteria then read from its file, as `tk show` prints
//     it (see Ready).
//   - Claim is `tk start`.
//   - Close adds the reason as a note, then `tk close`.
//   - Fail adds "ralph: failed: <reason>" as a note, then `tk reopen`: the
//     ticket is open again and comes back in a later run.
//
// tk resolves a partial id ("5c4" for "nw-5c46"); ralph always checks with
// tk show that an id names that very ticket before it changes one.
type tkSource struct {
	dir string
}

func (s *tkSource) Name() string { return "tk" }
func (s *tkSource) Tool() string { return "tk" }

// Files is .tickets, or TICKETS_DIR when it is set and inside the
// repository.
func (s *tkSource) Files() []string {
	d := os.Getenv("TICKETS_DIR")
	if d == "" {
		return []string{".tickets"}
	}
	if !filepath.IsAbs(d) {
		return []string{filepath.ToSlash(filepath.Clean(d))}
	}
	rel, err := filepath.Rel(s.dir, d)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return []string{filepath.ToSlash(rel)}
}

func (s *tkSource) tk(ctx context.Context, args ...string) ([]byte, error) {
	return runTool(ctx, s.dir, "tk", args...)
}

// ticketsDir is where tk keeps the tickets when run in dir: TICKETS_DIR,
// or the nearest .tickets directory at or above dir.
func (s *tkSource) ticketsDir() string {
	if d := os.Getenv("TICKETS_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.dir, d)
		}
		return d
	}
	for d := s.dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".tickets")); err == nil && fi.IsDir() {
			return filepath.Join(d, ".tickets")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(s.dir, ".tickets")
		}
	}
}

// checkIDs refuses tickets that share an id. tk lists a ticket by the id
// in its front matter but finds one by its file name (tk show, start,
// close), so of a ticket file copied by hand ralph would claim and close
// the original on every run and never run the copy. The files are read
// directly: tk has no command that lists every ticket with its file.
func (s *tkSource) checkIDs() error {
	_, err := s.tickets()
	return err
}

// tickets reads every ticket file once, refusing tickets that share an id
// (see checkIDs), and returns each file's text by its name without ".md":
// the name tk finds a ticket by.
func (s *tkSource) tickets() (map[string][]byte, error) {
	dir := s.ticketsDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // tk says what is wrong with the directory itself
	}
	byName := make(map[string][]byte, len(entries))
	var ids, files []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if id := frontMatterID(data); id != "" {
			ids = append(ids, id)
			files = append(files, e.Name())
			byName[strings.TrimSuffix(e.Name(), ".md")] = data
		}
	}
	id, at := duplicate(ids)
	if at == nil {
		return byName, nil
	}
	shown := s.shown(dir)
	places := make([]string, len(at))
	fix := "give each ticket an id of its own: the id: in a ticket's front matter must be its file's name, which tk finds it by"
	for i, k := range at {
		places[i] = shown + "/" + files[k]
	}
	for i, k := range at {
		if name := strings.TrimSuffix(files[k], ".md"); name != id {
			fix += fmt.Sprintf("; set id: %s in %s", name, places[i])
			break
		}
	}
	return nil, &DuplicateIDError{ID: id, Kind: "tickets", In: shown, Places: places, Fix: fix}
}

// shown is dir as the user knows it: relative to the repository when
// inside it.
func (s *tkSource) shown(dir string) string {
	if rel, err := filepath.Rel(s.dir, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return dir
}

// frontMatterID is the id: of a ticket file's front matter, "" when it has
// none.
func frontMatterID(data []byte) string {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if len(lines) == 0 || lines[0] != "---" {
		return ""
	}
	for _, l := range lines[1:] {
		if l == "---" {
			break
		}
		if key, val, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(key) == "id" {
			return strings.TrimSpace(val)
		}
	}
	return ""
}

// Ready is what tk ready lists, each ticket whole from its file, which
// the duplicate check has just read: what tk show prints of a ready
// ticket is its file and sections ralph does not read (its blockers are
// all closed). tk show itself runs only for a ticket whose file is not
// where tk keeps them under its id, as a plugin may list one; a show per
// ticket would cost a process, and tk's reading of every ticket, each.
func (s *tkSource) Ready(ctx context.Context) ([]Task, error) {
	files, err := s.tickets()
	if err != nil {
		return nil, err
	}
	out, err := s.tk(ctx, "ready")
	if err != nil {
		return nil, err
	}
	listed, err := parseTkList(out, "tk ready")
	if err != nil {
		return nil, err
	}
	tasks := make([]Task, 0, len(listed))
	for _, l := range listed {
		t, err := parseTkShow(files[l.ID])
		if err != nil || t.ID != l.ID {
			if t, err = s.Show(ctx, l.ID); err != nil {
				return nil, err
			}
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

func (s *tkSource) Blocked(ctx context.Context) ([]Task, error) {
	out, err := s.tk(ctx, "blocked")
	if err != nil {
		return nil, err
	}
	return parseTkList(out, "tk blocked")
}

func (s *tkSource) Show(ctx context.Context, id string) (Task, error) {
	out, err := s.tk(ctx, "show", id)
	if err != nil {
		if stderrSays(err, "not found") {
			return Task{}, fmt.Errorf("tk has no ticket %q: %w", id, ErrNoTask)
		}
		return Task{}, err
	}
	t, err := parseTkShow(out)
	if err != nil {
		return Task{}, fmt.Errorf("tk show %s: %w", id, err)
	}
	if t.ID != id {
		// tk matched a part of another ticket's id.
		return Task{}, fmt.Errorf("tk has no ticket %q (tk show %s shows %s): %w", id, id, t.ID, ErrNoTask)
	}
	return t, nil
}

func (s *tkSource) Claim(ctx context.Context, id string) error {
	return s.change(ctx, id, "", "start")
}

func (s *tkSource) Close(ctx context.Context, id, reason string) error {
	if strings.TrimSpace(reason) == "" {
		reason = "" // a blank reason adds no note
	}
	return s.change(ctx, id, reason, "close")
}

func (s *tkSource) Fail(ctx context.Context, id, reason string) error {
	return s.change(ctx, id, "ralph: failed: "+reason, "reopen")
}

// change checks that ticket id exists, adds note to it (when there is one)
// and runs tk verb on it.
func (s *tkSource) change(ctx context.Context, id, note, verb string) error {
	if err := s.checkIDs(); err != nil {
		return err
	}
	if _, err := s.Show(ctx, id); err != nil {
		return err
	}
	if note != "" {
		if _, err := s.tk(ctx, "add-note", id, note); err != nil {
			return err
		}
	}
	_, err := s.tk(ctx, verb, id)
	return err
}

// tkLine is a line of tk ready and tk blocked:
//
//	dr-ep7r  [P0][open] - Write the CSV encoder
//	dr-nc1l  [P2][open] - Document export <- [dr-qhah]
var tkLine = regexp.MustCompile(`^(\S+)\s+\[P(\d+)\]\[([^\]]*)\] - (.*)$`)

// parseTkList parses the output of tk ready or tk blocked.
func parseTkList(out []byte, what string) ([]Task, error) {
	var tasks []Task
	var lines []int // the line each task is on
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := tkLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s printed line %d, %q, which is not `ID [P<n>][<status>] - <title>`: is tk the ticket CLI (wedow/ticket)?", what, i+1, line)
		}
		prio, _ := strconv.Atoi(m[2])
		t := Task{ID: m[1], Priority: prio, Status: m[3], Title: m[4]}
		if k := strings.LastIndex(t.Title, " <- ["); k >= 0 && strings.HasSuffix(t.Title, "]") {
			t.Deps = splitList(t.Title[k+len(" <- [") : len(t.Title)-1])
			t.Title = t.Title[:k]
		}
		t.Closed = t.Status == "closed"
		tasks = append(tasks, t)
		lines = append(lines, i+1)
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	if err := checkUnique(ids, "tickets", "the output of "+what, "give each ticket an id of its own, its file's name",
		func(i int) string { return "line " + strconv.Itoa(lines[i]) }); err != nil {
		return nil, err
	}
	return tasks, nil
}

// tkNotDescription are the sections of a ticket that are not part of its
// description: the criteria, the notes, and what tk show appends.
var tkNotDescription = map[string]bool{
	"Acceptance Criteria": true, "Notes": true,
	"Blockers": true, "Blocking": true, "Children": true, "Linked": true,
}

// parseTkShow parses the output of tk show: the ticket file, front matter
// and markdown, followed by the sections tk adds (## Blockers lists the
// deps that are not closed).
func parseTkShow(out []byte) (Task, error) {
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if l == "---" {
			start = i
			break
		}
		if strings.TrimSpace(l) != "" {
			return Task{}, fmt.Errorf("line %d, %q, comes before the front matter's ---", i+1, l)
		}
	}
	if start < 0 {
		return Task{}, fmt.Errorf("no front matter (---) in what tk show printed")
	}
	end := -1
	for i := start + 1; i < len(lines); i++ {
		if lines[i] == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Task{}, fmt.Errorf("the front matter that starts on line %d has no closing ---", start+1)
	}
	var t Task
	var deps []string
	prioritySet := false
	for i, l := range lines[start+1 : end] {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		if !ok {
			return Task{}, fmt.Errorf("front matter line %d, %q, is not `key: value`", start+2+i, l)
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "id":
			t.ID = val
		case "status":
			t.Status = val
		case "priority":
			p, err := strconv.Atoi(val)
			if err != nil {
				return Task{}, fmt.Errorf("front matter line %d: priority %q is not a number", start+2+i, val)
			}
			t.Priority, prioritySet = p, true
		case "tags":
			t.Tags = splitList(strings.TrimSuffix(strings.TrimPrefix(val, "["), "]"))
		case "deps":
			deps = splitList(strings.TrimSuffix(strings.TrimPrefix(val, "["), "]"))
		}
	}
	if t.ID == "" {
		return Task{}, fmt.Errorf("the front matter has no id")
	}
	if !prioritySet {
		t.Priority = 2 // tk's default
	}
	t.Closed = t.Status == "closed"

	// The body: "# title", the description, then "## " sections.
	var desc []string
	section := ""
	sections := map[string][]string{}
	titled := false
	fence := false
	for _, l := range lines[end+1:] {
		if strings.HasPrefix(strings.TrimSpace(l), "```") || strings.HasPrefix(strings.TrimSpace(l), "~~~") {
			fence = !fence
		}
		switch {
		case !fence && !titled && section == "" && strings.HasPrefix(l, "# "):
			t.Title = strings.TrimSpace(l[2:])
			titled = true
			continue
		case !fence && strings.HasPrefix(l, "## "):
			section = strings.TrimSpace(l[3:])
			if !tkNotDescription[section] {
				desc = append(desc, l)
			}
			continue
		}
		if section == "" || !tkNotDescription[section] {
			desc = append(desc, l)
		} else {
			sections[section] = append(sections[section], l)
		}
	}
	t.Description = strings.TrimSpace(strings.Join(desc, "\n"))
	t.Criteria = parseCriteria(strings.Join(sections["Acceptance Criteria"], "\n"))

	// Deps are those of the front matter that tk show lists as blockers.
	blockers := map[string]bool{}
	for _, l := range sections["Blockers"] {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				blockers[f[0]] = true
			}
		}
	}
	for _, d := range deps {
		if blockers[d] {
			t.Deps = append(t.Deps, d)
		}
	}
	return withAgent(t), nil
}

// splitList splits "a, b,c" into its non-empty trimmed items.
func splitList(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}
