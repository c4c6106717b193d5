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
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/ralphdir"
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
	// Root is the .ralph directory Path is under: the directories from it
	// down are checked (internal/ralphdir), and Path is never read or
	// written through a link. "" is Path's own directory.
	Root string
	Now  func() time.Time
}

func (s Store) root() string {
	if s.Root != "" {
		return s.Root
	}
	return filepath.Dir(s.Path)
}

const header = "# Memories\n\nLong-term notes for agents working in this repository, kept by `ralph memory`.\n"

var marker = regexp.MustCompile(`(?m)^<!-- ralph memory: id=(\S+) type=(\S+) tags=(\S*) at=(\S+) -->\n`)

// List reads every memory, oldest first. A missing file holds none.
func (s Store) List() ([]Memory, error) {
	data, err := ralphdir.ReadFile(s.root(), s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, ralphdir.Explain(s.Path, fmt.Errorf("read memories: %w", err))
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

// Remove deletes the memory with id and returns it, so the caller can say
// what was forgotten.
func (s Store) Remove(id string) (Memory, error) {
	var gone Memory
	err := s.update(func(ms []Memory) ([]Memory, error) {
		i := slices.IndexFunc(ms, func(m Memory) bool { return m.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("no memory %q; `ralph memory list` shows the ids", id)
		}
		gone = ms[i]
		return slices.Delete(ms, i, i+1), nil
	})
	return gone, err
}

// update rewrites the file under a lock, atomically, so two agents adding
// memories at once both keep theirs and a reader never sees half a file.
func (s Store) update(change func([]Memory) ([]Memory, error)) error {
	if err := ralphdir.MkdirAll(s.root(), filepath.Dir(s.Path)); err != nil {
		return err
	}
	lock := ralphdir.Lock(s.Path + ".lock")
	if err := lock.Lock(); err != nil {
		return ralphdir.Explain(s.Path+".lock", fmt.Errorf("lock memories: %w", err))
	}
	defer func() { _ = lock.Unlock() }()
	ms, err := s.List()
	if err != nil {
		return err
	}
	if ms, err = change(ms); err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomic(s.root(), s.Path, render(ms)); err != nil {
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

// ErrEmptyQuery is returned by Search for a query with no words to look
// for: matching everything would rank nothing.
var ErrEmptyQuery = errors.New("the search query has no words to look for")

// Search returns the memories that match query, best match first.
//
// Each query term is weighed by where it matches: a tag or the type (3), a
// whole word of the text (2), or part of a word (1; only for terms of three
// or more characters, since "go" is inside "algorithm" by accident).
// Memories that match more of the terms come first, then those with the
// higher weight, then the newest. Memories that match no term are left out.
// A query without words is ErrEmptyQuery.
func Search(ms []Memory, query string) ([]Memory, error) {
	words := queryTerms(query)
	if len(words) == 0 {
		return nil, ErrEmptyQuery
	}
	var list []match
	for _, m := range ms {
		if mt := score(m, words); mt.terms > 0 {
			list = append(list, mt)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].better(list[j]) })
	out := make([]Memory, len(list))
	for i, mt := range list {
		out[i] = mt.m
	}
	return out, nil
}

// Weights of where a query term matches a memory.
const (
	weightTag       = 3
	weightWord      = 2
	weightSubstring = 1
	// minSubstring is the shortest term that may match inside a word.
	minSubstring = 3
)

// match is how well one memory matches a query.
type match struct {
	m      Memory
	terms  int // how many query terms match at all
	weight int // the sum of each matching term's best weight
}

func (a match) better(b match) bool {
	if a.terms != b.terms {
		return a.terms > b.terms
	}
	if a.weight != b.weight {
		return a.weight > b.weight
	}
	return a.m.At.After(b.m.At)
}

func score(m Memory, query []string) match {
	tags := map[string]bool{strings.ToLower(m.Type): true}
	for _, t := range m.Tags {
		// A tag counts whole ("db-migrations") and by its words ("db").
		tags[strings.ToLower(t)] = true
		for _, w := range words(t) {
			tags[w] = true
		}
	}
	text := words(m.Text)
	have := map[string]bool{}
	for _, w := range text {
		have[w] = true
	}
	mt := match{m: m}
	for _, q := range query {
		w := termWeight(q, tags, have, text)
		if w > 0 {
			mt.terms++
			mt.weight += w
		}
	}
	return mt
}

// termWeight is the weight of the best place query term q matches: 0 when
// it matches nowhere.
func termWeight(q string, tags, have map[string]bool, text []string) int {
	switch {
	case tags[q]:
		return weightTag
	case have[q]:
		return weightWord
	case utf8.RuneCountInString(q) < minSubstring:
		return 0
	}
	inside := func(w string) bool { return strings.Contains(w, q) }
	if slices.ContainsFunc(text, inside) || slices.ContainsFunc(slices.Collect(maps.Keys(tags)), inside) {
		return weightSubstring
	}
	return 0
}

// stopWords match almost everything, so they say nothing about relevance.
// The engine's query is a whole objective and a hat's instructions, where
// they abound.
var stopWords = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true,
	"for": true, "with": true, "how": true, "what": true, "this": true, "that": true, "are": true,
	"was": true, "you": true, "can": true, "not": true, "but": true, "all": true, "any": true,
	"from": true, "into": true, "its": true, "has": true, "have": true, "use": true, "when": true,
	"then": true, "should": true, "i": true, "is": true, "it": true, "in": true, "on": true,
	"of": true, "to": true, "at": true, "by": true, "as": true, "be": true, "do": true, "if": true,
	"so": true, "we": true, "my": true, "me": true}

// queryTerms are the distinct lower-case words of query, short ones
// included ("db"), in order. Stop words are dropped unless the query has
// nothing else, so that a search for "the" still finds "the".
func queryTerms(query string) []string {
	var all, kept []string
	seen := map[string]bool{}
	for _, w := range words(query) {
		if seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if !stopWords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return all
	}
	return kept
}

// words splits s into lower-case words of letters and digits: "db/migrations"
// and "cache_test.go" are two and three words.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Select renders the memories most relevant to query, then the newest of
// the rest, as long as they fit in budget characters.
func Select(ms []Memory, query string, budget int) string {
	if budget <= 0 || len(ms) == 0 {
		return ""
	}
	// An objective with no words selects by recency alone.
	relevant, _ := Search(ms, query)
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
		fmt.Fprintf(&b, "(%s did not fit; `ralph memory search WORDS` finds %s)\n",
			plural.Count(left, "more memory", "more memories"), plural.Word(left, "it", "them"))
	}
	return b.String()
}

func tagList(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}
