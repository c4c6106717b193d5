package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/internal/atomicfile"
)

// prdSource is a prd.json file:
//
//	{"project": …, "userStories": [{"id", "title", "description",
//	  "priority", "passes", "acceptanceCriteria": […], "notes",
//	  "dependsOn": ["US-001", …], "backend", "model"}, …]}
//
// A story is ready while "passes" is false and every story of its
// "dependsOn" (the key snarktank's ralph and ralph-tui write) passes;
// lower "priority" first, ties in file order. One whose dependencies do
// not all pass yet is Blocked, its Deps those that do not. A dependency
// on an id no story has, or stories that depend on each other in a cycle,
// make every read fail (*UnknownDepError, *DepCycleError), as two stories
// of one id do. Close sets "passes" to true; Fail writes "ralph: failed: …"
// to "notes" (after the notes a person wrote, which it keeps). Either
// rewrites the file atomically with every other field, and the order of
// every object's keys, as they were; only the layout becomes JSON's usual
// two-space indentation.
type prdSource struct {
	dir, path string
	mu        sync.Mutex // one read-modify-write at a time
}

func (s *prdSource) Name() string    { return "prd" }
func (s *prdSource) Tool() string    { return "" }
func (s *prdSource) Files() []string { return []string{filepath.ToSlash(s.path)} }

func (s *prdSource) file() string {
	if filepath.IsAbs(s.path) {
		return s.path
	}
	return filepath.Join(s.dir, s.path)
}

type prdStory struct {
	ID                 string   `json:"id"`
	Title              string   `json:"title"`
	Description        string   `json:"description"`
	Priority           float64  `json:"priority"`
	Passes             bool     `json:"passes"`
	AcceptanceCriteria []string `json:"acceptanceCriteria"`
	Notes              string   `json:"notes"`
	Tags               []string `json:"tags"`
	Labels             []string `json:"labels"`
	DependsOn          []string `json:"dependsOn"`
	// Backend and Model are raw so that a value that is not a string
	// fails its story (CheckAgent), not the read of every story.
	Backend json.RawMessage `json:"backend"`
	Model   json.RawMessage `json:"model"`
}

// task is the story as a Task; passing says which stories pass, for its
// Deps.
func (st prdStory) task(passing map[string]bool) Task {
	t := Task{
		ID:          st.ID,
		Title:       st.Title,
		Description: strings.TrimSpace(st.Description),
		Priority:    int(st.Priority),
		Status:      "open",
		Closed:      st.Passes,
		Tags:        append(append([]string(nil), st.Tags...), st.Labels...),
		Criteria:    criteriaOf(st.AcceptanceCriteria),
		Backend:     agentField(st.Backend),
		Model:       agentField(st.Model),
	}
	t = withAgent(t)
	if st.Passes {
		t.Status = "passes"
	}
	for _, d := range st.DependsOn {
		if !passing[d] && !slices.Contains(t.Deps, d) {
			t.Deps = append(t.Deps, d)
		}
	}
	return t
}

// passing is the ids of the stories that pass.
func passing(stories []prdStory) map[string]bool {
	out := make(map[string]bool, len(stories))
	for _, st := range stories {
		out[st.ID] = st.Passes
	}
	return out
}

// read returns the file's text and its stories.
func (s *prdSource) read() ([]byte, []prdStory, error) {
	data, err := os.ReadFile(s.file())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s does not exist: write one, or set autopilot.source.path", s.path)
	}
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		UserStories []json.RawMessage `json:"userStories"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %s", s.path, jsonProblem(data, err))
	}
	stories := make([]prdStory, 0, len(doc.UserStories))
	for i, raw := range doc.UserStories {
		var st prdStory
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, nil, fmt.Errorf("%s: userStories[%d]: %w", s.path, i, err)
		}
		if st.ID == "" {
			return nil, nil, fmt.Errorf("%s: userStories[%d] has no id", s.path, i)
		}
		stories = append(stories, st)
	}
	if err := s.checkUnique(data, stories); err != nil {
		return nil, nil, err
	}
	if err := s.checkDeps(data, stories); err != nil {
		return nil, nil, err
	}
	return data, stories, nil
}

// checkUnique refuses two stories with one id: Show, Close and Fail would
// find the first every time, so the second would never run and the first
// would run, and pass, on every run.
func (s *prdSource) checkUnique(data []byte, stories []prdStory) error {
	ids := make([]string, len(stories))
	for i, st := range stories {
		ids[i] = st.ID
	}
	return checkUnique(ids, "stories", s.path,
		fmt.Sprintf("give each story in %s an id of its own: %s", s.path, whyOneID),
		storyPlaces(data))
}

// storyPlaces says where in data the story of an index is: its index and,
// when that can be told, its line. The lines are found only when a place
// is asked for, which is for an error: a file that is right is read once.
func storyPlaces(data []byte) func(int) string {
	var lines []int
	found := false
	return func(i int) string {
		if !found {
			lines, found = storyLines(data), true
		}
		if i < len(lines) {
			return fmt.Sprintf("userStories[%d] on line %d", i, lines[i])
		}
		return fmt.Sprintf("userStories[%d]", i)
	}
}

// checkDeps refuses a dependsOn that names no story, and stories that
// depend on each other in a cycle: either would hold stories back for
// ever, or let one start before what it needs, with no word of why. The
// ids are unique by now.
func (s *prdSource) checkDeps(data []byte, stories []prdStory) error {
	place := storyPlaces(data)
	index := make(map[string]int, len(stories))
	ids := make([]string, len(stories))
	for i, st := range stories {
		index[st.ID], ids[i] = i, st.ID
	}
	deps := make(map[string][]string, len(stories))
	for i, st := range stories {
		for _, d := range st.DependsOn {
			if _, ok := index[d]; !ok {
				return &UnknownDepError{Task: st.ID, Dep: d, Kind: "story", In: s.path, Place: place(i),
					Fix: fmt.Sprintf("dependsOn lists the ids of the stories a story waits for: correct %q in the dependsOn of %s, "+
						"or add the story it means to %s", d, st.ID, s.path)}
			}
		}
		deps[st.ID] = st.DependsOn
	}
	cycle := depCycle(ids, deps)
	if cycle == nil {
		return nil
	}
	places := make([]string, len(cycle)-1)
	for i, id := range cycle[:len(cycle)-1] {
		places[i] = place(index[id])
	}
	return &DepCycleError{Cycle: cycle, Kind: "stories", In: s.path, Places: places, Fix: cycleFix(cycle, "dependsOn")}
}

// storyLines are the lines on which the objects of data's userStories
// start; nil when that cannot be told.
func storyLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "userStories" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil
		}
		var lines []int
		// The lines are counted on from the last story's start, not from
		// the top again for each: once through the file in all.
		line, counted := 1, 0
		for dec.More() {
			// The offset is where the last token ended: before the comma
			// and the blanks that lead to this object.
			off := int(dec.InputOffset())
			for off < len(data) && bytes.IndexByte([]byte(", \t\r\n"), data[off]) >= 0 {
				off++
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			line += bytes.Count(data[counted:off], []byte("\n"))
			counted = off
			lines = append(lines, line)
		}
		return lines
	}
	return nil
}

// Ready is the stories that do not pass and wait for none that does not.
func (s *prdSource) Ready(ctx context.Context) ([]Task, error) {
	ready, _, err := s.Split(ctx)
	return ready, err
}

// Blocked is the stories that do not pass and wait for one that does not.
func (s *prdSource) Blocked(ctx context.Context) ([]Task, error) {
	_, blocked, err := s.Split(ctx)
	return blocked, err
}

// Split is the stories that do not pass, those that wait for none that
// does not and the others, each by priority, from one read of the file.
func (s *prdSource) Split(context.Context) (ready, blocked []Task, err error) {
	_, stories, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	pass := passing(stories)
	all := make([]Task, len(stories))
	for i, st := range stories {
		all[i] = st.task(pass)
	}
	ready, blocked = splitOpen(all)
	return ready, blocked, nil
}

func (s *prdSource) Show(_ context.Context, id string) (Task, error) {
	_, stories, err := s.read()
	if err != nil {
		return Task{}, err
	}
	for _, st := range stories {
		if st.ID == id {
			return st.task(passing(stories)), nil
		}
	}
	return Task{}, fmt.Errorf("%s has no story %q: %w", s.path, id, ErrNoTask)
}

// Claim changes nothing: prd.json has no field for it.
func (s *prdSource) Claim(ctx context.Context, id string) error {
	_, err := s.Show(ctx, id)
	return err
}

func (s *prdSource) Close(_ context.Context, id, _ string) error {
	return s.edit(id, func(story *orderedObject, _ prdStory) error {
		story.set("passes", json.RawMessage("true"))
		return nil
	})
}

func (s *prdSource) Fail(_ context.Context, id, reason string) error {
	return s.edit(id, func(story *orderedObject, st prdStory) error {
		note := "ralph: failed: " + reason
		if st.Notes != "" && !strings.HasPrefix(st.Notes, "ralph: failed: ") {
			// Keep what a person wrote; replace only ralph's last verdict.
			if k := strings.LastIndex(st.Notes, "\nralph: failed: "); k >= 0 {
				st.Notes = st.Notes[:k]
			}
			note = st.Notes + "\n" + note
		}
		raw, err := marshalNoEscape(note)
		if err != nil {
			return err
		}
		story.set("notes", raw)
		return nil
	})
}

// edit rewrites the story with the id through change, keeping the rest of
// the file as it was.
func (s *prdSource) edit(id string, change func(*orderedObject, prdStory) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, stories, err := s.read()
	if err != nil {
		return err
	}
	index := -1
	for i, st := range stories {
		if st.ID == id {
			index = i
			break
		}
	}
	if index < 0 {
		return fmt.Errorf("%s has no story %q: %w", s.path, id, ErrNoTask)
	}
	top, err := parseOrdered(data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(top.get("userStories"), &list); err != nil {
		return fmt.Errorf("%s: userStories: %w", s.path, err)
	}
	story, err := parseOrdered(list[index])
	if err != nil {
		return fmt.Errorf("%s: userStories[%d]: %w", s.path, index, err)
	}
	if err := change(story, stories[index]); err != nil {
		return err
	}
	list[index] = story.marshal()
	top.set("userStories", marshalList(list))
	var out bytes.Buffer
	if err := json.Indent(&out, top.marshal(), "", "  "); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	out.WriteByte('\n')
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(s.file()); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.WriteFile(s.file(), out.Bytes(), mode)
}

// orderedObject is a JSON object whose keys keep their order and whose
// values stay as written.
type orderedObject struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseOrdered(data []byte) (*orderedObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &orderedObject{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *orderedObject) get(key string) json.RawMessage { return o.vals[key] }

func (o *orderedObject) set(key string, val json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = val
}

func (o *orderedObject) marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := marshalNoEscape(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalList(items []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// marshalNoEscape encodes v as JSON without escaping <, > and &.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// jsonProblem says where in data a JSON error is, as line:column.
func jsonProblem(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	default:
		return err.Error()
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	// The offset counts the byte the error is at.
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := max(int(off)-bytes.LastIndexByte(data[:off], '\n')-1, 1)
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}
