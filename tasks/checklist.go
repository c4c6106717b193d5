package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/ralph-loop/ralph/internal/atomicfile"
)

// checklistSource is a markdown file's task boxes (TODO.md by default).
//
//   - Each "- [ ] text" (or "* [ ]", "+ [ ]", "1. [ ]") that is not nested
//     under another box is a task, in file order; all have priority 0.
//     "- [x]" is a task already done.
//   - The lines indented under a task are its description, except its
//     nested boxes, which are its acceptance criteria (checked or not):
//     a sub-step is something to verify, not a task of its own to run in
//     parallel with its parent.
//   - A task's id is a slug of its text (lowercase letters and digits,
//     other runs of characters as '-', at most 40), with -2, -3, … for
//     later tasks of the same slug: stable while the text is.
//   - The words "backend:NAME" and "model:NAME" in a task's text name the
//     agent its loop runs with (see agent.go); they are not part of its
//     title, nor of its id, which stays the same when they are added.
//   - Close checks the box in place ("- [x]"), changing nothing else; Claim
//     and Fail change nothing (the box stays unchecked).
//
// Boxes inside fenced code blocks are examples, not tasks.
type checklistSource struct {
	dir, path string
	mu        sync.Mutex // one read-modify-write at a time
}

func (s *checklistSource) Name() string    { return "checklist" }
func (s *checklistSource) Tool() string    { return "" }
func (s *checklistSource) Files() []string { return []string{filepath.ToSlash(s.path)} }

func (s *checklistSource) file() string {
	if filepath.IsAbs(s.path) {
		return s.path
	}
	return filepath.Join(s.dir, s.path)
}

// checkItem is a task of a checklist and where its box is.
type checkItem struct {
	task Task
	// box is the byte offset of the ' ' or 'x' between the brackets.
	box int
}

// boxLine is a list item with a box: indentation, marker, box, text.
var boxLine = regexp.MustCompile(`^([ \t]*)(?:[-*+]|\d+[.)])[ \t]+\[([ xX])\](?:[ \t]+(.*?))?[ \t]*$`)

func (s *checklistSource) read() ([]byte, []checkItem, error) {
	data, err := os.ReadFile(s.file())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s does not exist: write a checklist of `- [ ] task` lines, or set autopilot.source.path", s.path)
	}
	if err != nil {
		return nil, nil, err
	}
	return data, parseChecklist(data), nil
}

// parseChecklist reads a checklist's tasks (see checklistSource).
func parseChecklist(data []byte) []checkItem {
	var items []checkItem
	cur := -1      // index of the item whose body we are in
	curIndent := 0 // its indentation, in columns
	var desc []string
	ids := newSlugs()
	fence := ""
	finish := func() {
		if cur >= 0 {
			items[cur].task.Description = strings.TrimSpace(dedent(desc))
		}
		cur, desc = -1, nil
	}
	offset := 0
	for _, line := range strings.SplitAfter(string(data), "\n") {
		start := offset
		offset += len(line)
		text := strings.TrimRight(line, "\r\n")
		indent := columns(text)
		trimmed := strings.TrimSpace(text)

		if f := fenceMark(trimmed); f != "" || fence != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimLeft(trimmed, fence[:1]) == "":
				fence = ""
			}
			if cur >= 0 && indent > curIndent {
				desc = append(desc, text)
			} else if cur >= 0 && trimmed != "" {
				finish()
			}
			continue
		}
		if m := boxLine.FindStringSubmatchIndex(text); m != nil {
			if cur >= 0 && indent > curIndent {
				// A nested box: a criterion of the current task.
				if m[6] >= 0 {
					items[cur].task.Criteria = append(items[cur].task.Criteria, criterionOf(text[m[6]:m[7]]))
				}
				continue
			}
			finish()
			itemText := ""
			if m[6] >= 0 {
				itemText = text[m[6]:m[7]]
			}
			done := text[m[4]:m[5]] != " "
			title, agent := checklistAgent(itemText)
			t := withAgent(Task{ID: ids.unique(title), Title: title, Status: "open", Closed: done, Tags: agent})
			if done {
				t.Status = "done"
			}
			items = append(items, checkItem{task: t, box: start + m[4]})
			cur, curIndent = len(items)-1, indent
			continue
		}
		if cur < 0 {
			continue
		}
		switch {
		case trimmed == "":
			desc = append(desc, "")
		case indent > curIndent:
			desc = append(desc, text)
		default:
			finish()
		}
	}
	finish()
	return items
}

// columns is the width of a line's indentation, a tab counting 4.
func columns(line string) int {
	n := 0
	for _, r := range line {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// dedent removes the indentation the non-blank lines share.
func dedent(lines []string) string {
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " \t")); least < 0 || n < least {
			least = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= least && least > 0 {
			out[i] = l[least:]
		} else {
			out[i] = strings.TrimSpace(l)
		}
	}
	return strings.Join(out, "\n")
}

func fenceMark(trimmed string) string {
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, c) {
			return trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, c[:1]))]
		}
	}
	return ""
}

// slugMax is the longest slug an item's text makes.
const slugMax = 40

// slug makes an id of a checklist item's text, its letters spelt in
// ASCII (ids name branches and directories): accents come off (Ünïcödé is
// unicode), and letters without a decomposition are spelt out (ß is ss).
// Letters of other scripts have no such spelling and are left out.
func slug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range asciiLetters(strings.ToLower(text)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= slugMax {
				break
			}
			continue
		}
		dash = true
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > slugMax {
		s = strings.TrimRight(s[:slugMax], "-")
	}
	if s == "" {
		s = "task"
	}
	return s
}

// slugs are the ids a checklist's items have taken so far.
type slugs struct {
	taken map[string]bool
	// next is, for a slug, the suffix from which no lower one is free:
	// the thousandth box of one text takes its id without trying the
	// 999 before it again.
	next map[string]int
}

func newSlugs() *slugs { return &slugs{taken: map[string]bool{}, next: map[string]int{}} }

// unique is slug(text), with -2, -3, … when an earlier item took it.
func (s *slugs) unique(text string) string {
	base := slug(text)
	id := base
	n := max(s.next[base], 2)
	for ; s.taken[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	s.next[base] = n
	s.taken[id] = true
	return id
}

func (s *checklistSource) Ready(context.Context) ([]Task, error) {
	_, items, err := s.read()
	if err != nil {
		return nil, err
	}
	var tasks []Task
	for _, it := range items {
		if !it.task.Closed {
			tasks = append(tasks, it.task)
		}
	}
	return tasks, nil
}

func (s *checklistSource) find(id string) ([]byte, checkItem, error) {
	data, items, err := s.read()
	if err != nil {
		return nil, checkItem{}, err
	}
	for _, it := range items {
		if it.task.ID == id {
			return data, it, nil
		}
	}
	return nil, checkItem{}, fmt.Errorf("%s has no task %q (has its text changed?): %w", s.path, id, ErrNoTask)
}

func (s *checklistSource) Show(_ context.Context, id string) (Task, error) {
	_, it, err := s.find(id)
	return it.task, err
}

// Claim changes nothing: a box has no state between open and done.
func (s *checklistSource) Claim(_ context.Context, id string) error {
	_, _, err := s.find(id)
	return err
}

func (s *checklistSource) Close(_ context.Context, id, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, it, err := s.find(id)
	if err != nil || it.task.Closed {
		return err
	}
	out := bytes.Clone(data)
	out[it.box] = 'x'
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(s.file()); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.WriteFile(s.file(), out, mode)
}

// Fail changes nothing: the box stays unchecked, and the task comes back.
func (s *checklistSource) Fail(_ context.Context, id, _ string) error {
	_, _, err := s.find(id)
	return err
}

// spelt are lower-case Latin letters with no decomposition to an ASCII
// letter, and how they are written in ASCII.
var spelt = map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ł': "l", 'đ': "d", 'ð': "d", 'þ': "th", 'ı': "i"}

// asciiLetters is text decomposed (NFD) without its combining marks, with
// the letters of spelt written out.
func asciiLetters(text string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(text) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case spelt[r] != "":
			b.WriteString(spelt[r])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
