// Package memory owns long-term memories: notes that outlive a run, kept
// in .ralph/agent/memories.md and injected into prompts by relevance within
// a budget. The file is markdown a person can read and edit; each memory
// starts with a marker comment that carries its id, type, tags and time.
package memory

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// Types of memory.
var Types = []string{"pattern", "decision", "fix", "context"}

// Memory is one note.
type Memory struct {
	ID   string    `json:"id"`
	Type string    `json:"type"`
	Tags []string  `json:"tags,omitempty"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// Store reads and writes a memories file.
type Store struct {
	Path string
	Now  func() time.Time
}

const header = "# Memories\n\nLong-term notes for agents working in this repository, kept by `ralph memory`.\n"

var marker = regexp.MustCompile(`(?m)^<!-- ralph memory: id=(\S+) type=(\S+) tags=(\S*) at=(\S+) -->\n`)

// List reads every memory, oldest first. A missing file holds none.
func (s Store) List() ([]Memory, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	return parse(string(data)), nil
}

func parse(text string) []Memory {
	locs := marker.FindAllStringSubmatchIndex(text, -1)
	out := make([]Memory, 0, len(locs))
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		m := Memory{ID: text[loc[2]:loc[3]], Type: text[loc[4]:loc[5]], Text: strings.TrimSpace(text[loc[1]:end])}
		if tags := text[loc[6]:loc[7]]; tags != "" {
			m.Tags = strings.Split(tags, ",")
		}
		m.At, _ = time.Parse(time.RFC3339, text[loc[8]:loc[9]])
		out = append(out, m)
	}
	return out
}

func render(ms []Memory) []byte {
	var b strings.Builder
	b.WriteString(header)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n<!-- ralph memory: id=%s type=%s tags=%s at=%s -->\n%s\n",
			m.ID, m.Type, strings.Join(m.Tags, ","), m.At.UTC().Format(time.RFC3339), strings.TrimSpace(m.Text))
	}
	return []byte(b.String())
}

// Add stores a new memory and returns it.
func (s Store) Add(text, typ string, tags []string) (Memory, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Memory{}, errors.New("the memory is empty; say what to remember")
	}
	if typ == "" {
		typ = "context"
	}
	if !slices.Contains(Types, typ) {
		return Memory{}, fmt.Errorf("unknown memory type %q; use one of %s", typ, strings.Join(Types, ", "))
	}
	for _, t := range tags {
		if t == "" || strings.ContainsAny(t, ", \t\n") {
			return Memory{}, fmt.Errorf("tag %q: a tag is one word without commas or spaces", t)
		}
	}
	m := Memory{ID: s.newID(), Type: typ, Tags: tags, At: s.now().UTC().Truncate(time.Second), Text: text}
	err := s.update(func(ms []Memory) ([]Memory, error) { return append(ms, m), nil })
	return m, err
}

// Remove deletes the memory with id.
func (s Store) Remove(id string) error {
	return s.update(func(ms []Memory) ([]Memory, error) {
		i := slices.IndexFunc(ms, func(m Memory) bool { return m.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("no memory %q; `ralph memory list` shows the ids", id)
		}
		return slices.Delete(ms, i, i+1), nil
	})
}

// update rewrites the file under a lock, atomically, so two agents adding
// memories at once both keep theirs and a reader never sees half a file.
func (s Store) update(change func([]Memory) ([]Memory, error)) error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return fmt.Errorf("write memories: %w", err)
	}
	lock := flock.New(s.Path + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("lock memories: %w", err)
	}
	defer func() { _ = lock.Unlock() }()
	ms, err := s.List()
	if err != nil {
		return err
	}
	if ms, err = change(ms); err != nil {
		return err
	}
	if err := renameio.WriteFile(s.Path, render(ms), 0o644, renameio.WithTempDir(filepath.Dir(s.Path))); err != nil {
		return fmt.Errorf("write memories: %w", err)
	}
	return nil
}

func (s Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s Store) newID() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return "m-" + s.now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// Search ranks memories by how many of query's words they contain (text,
// tags and type), newest first among equals; memories with no match are
// left out unless the query is empty.
func Search(ms []Memory, query string) []Memory {
	words := terms(query)
	type scored struct {
		m     Memory
		score int
	}
	var list []scored
	for _, m := range ms {
		sc := score(m, words)
		if sc > 0 || len(words) == 0 {
			list = append(list, scored{m, sc})
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].m.At.After(list[j].m.At)
	})
	out := make([]Memory, len(list))
	for i, s := range list {
		out[i] = s.m
	}
	return out
}

func score(m Memory, words map[string]bool) int {
	n := 0
	have := terms(m.Text + " " + strings.Join(m.Tags, " ") + " " + m.Type)
	for w := range words {
		if have[w] {
			n++
		}
	}
	return n
}

// stopWords match almost everything, so they say nothing about relevance.
var stopWords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "how": true,
	"what": true, "this": true, "that": true, "are": true, "was": true, "you": true, "can": true,
	"not": true, "but": true, "all": true, "any": true, "from": true, "into": true, "its": true,
	"has": true, "have": true, "use": true, "when": true, "then": true, "should": true}

// terms are the lower-case words of s longer than two letters, without
// stop words.
func terms(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		if len(w) > 2 && !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

// Select renders the memories most relevant to query, then the newest of
// the rest, as long as they fit in budget characters.
func Select(ms []Memory, query string, budget int) string {
	if budget <= 0 || len(ms) == 0 {
		return ""
	}
	relevant := Search(ms, query)
	seen := map[string]bool{}
	for _, m := range relevant {
		seen[m.ID] = true
	}
	rest := slices.Clone(ms)
	slices.Reverse(rest) // newest first
	ordered := relevant
	for _, m := range rest {
		if !seen[m.ID] {
			ordered = append(ordered, m)
		}
	}
	var b strings.Builder
	left := 0
	for _, m := range ordered {
		line := fmt.Sprintf("- [%s%s] %s\n", m.Type, tagList(m.Tags), strings.ReplaceAll(m.Text, "\n", "\n  "))
		if b.Len()+len(line) > budget {
			left++
			continue
		}
		b.WriteString(line)
	}
	if left > 0 {
		fmt.Fprintf(&b, "(%d more memories did not fit; `ralph memory search WORDS` finds them)\n", left)
	}
	return b.String()
}

func tagList(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}
