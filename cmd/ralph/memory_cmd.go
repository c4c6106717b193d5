package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/engine/memory"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

type memoryCmd struct {
	Add    memoryAddCmd    `cmd:"" help:"Remember something for later runs."`
	List   memoryListCmd   `cmd:"" help:"List the memories."`
	Search memorySearchCmd `cmd:"" help:"Find memories by words, most relevant first."`
	Rm     memoryRmCmd     `cmd:"" help:"Forget a memory."`
}

func (memoryCmd) Help() string {
	return `Long-term memories live in .ralph/agent/memories.md and outlive runs. ralph
puts the ones most relevant to each iteration (and then the newest) into the
prompt, within memories.budget characters (default 4000). Agents can add them
too: the prompt tells them how.

Examples:
  ralph memory add "Integration tests need TEST_DB_URL set" --type context --tag tests
  ralph memory add "Use errors.Is, never compare error strings" --type pattern
  ralph memory list
  ralph memory search migrations
  ralph memory rm m-20261122-101500-3f2a`
}

func memoryStore(dir string) memory.Store {
	return memory.Store{Path: runfiles.In(dir).Memories(), Root: runfiles.In(dir).Path()}
}

type memoryAddCmd struct {
	Text string   `arg:"" help:"What to remember."`
	Type string   `default:"context" enum:"pattern,decision,fix,context" help:"pattern, decision, fix or context."`
	Tag  []string `placeholder:"TAG" help:"A tag; repeat for more."`
	JSON bool     `name:"json" help:"Print the stored memory as one JSON object (as memory list --json has each), instead of its id."`
}

func (memoryAddCmd) Help() string {
	return "Examples:\n  ralph memory add \"The API client retries on 429 by itself\" --type fix --tag api\n" +
		"  ralph memory add \"Run migrations before the tests\" --json | jq -r .id"
}

func (c *memoryAddCmd) Run(g *globals) error {
	if err := runfiles.IgnoreOwnFilesIfMissing(filepath.Join(g.Dir, runfiles.DirName)); err != nil {
		return err
	}
	// Memories outlive the run and, shared, are committed: a secret is
	// hidden before it is stored.
	r := readerRedactor(g.Dir)
	tags := make([]string, len(c.Tag))
	for i, tag := range c.Tag {
		tags[i] = r.String(tag)
	}
	m, err := memoryStore(g.Dir).Add(r.String(c.Text), c.Type, tags)
	if h := hint.Hinter(nil); errors.As(err, &h) {
		return err // a refusal that says how to fix it (a link under .ralph/)
	}
	if err != nil {
		return withHint(err, "ralph memory add TEXT [--type pattern|decision|fix|context] [--tag T]")
	}
	if c.JSON {
		return json.NewEncoder(g.stdout).Encode(m)
	}
	fmt.Fprintln(g.stdout, m.ID)
	return nil
}

type memoryListCmd struct {
	JSON bool `name:"json" help:"Print the memories as JSON."`
}

func (memoryListCmd) Help() string {
	return "Examples:\n  ralph memory list\n  ralph memory list --json"
}

func (c *memoryListCmd) Run(g *globals) error {
	ms, err := memoryStore(g.Dir).List()
	if err != nil {
		return err
	}
	return view.WriteMemories(g.stdout, redactMemories(readerRedactor(g.Dir), ms), c.JSON)
}

// redactMemories hides secret values in memories read from the file, which
// a person or an older ralph may have written them into.
func redactMemories(r *redact.Redactor, ms []memory.Memory) []memory.Memory {
	for i := range ms {
		ms[i].Text = r.String(ms[i].Text)
		for j, tag := range ms[i].Tags {
			ms[i].Tags[j] = r.String(tag)
		}
	}
	return ms
}

type memorySearchCmd struct {
	Query []string `arg:"" help:"Words to look for."`
	JSON  bool     `name:"json" help:"Print the memories as JSON."`
}

func (memorySearchCmd) Help() string { return "Examples:\n  ralph memory search database migrations" }

func (c *memorySearchCmd) Run(g *globals) error {
	ms, err := memoryStore(g.Dir).List()
	if err != nil {
		return err
	}
	found, err := memory.Search(ms, strings.Join(c.Query, " "))
	if errors.Is(err, memory.ErrEmptyQuery) {
		return withHint(err, "name what to look for, e.g. `ralph memory search db migrations`; `ralph memory list` shows them all")
	}
	if err != nil {
		return err
	}
	return view.WriteMemories(g.stdout, redactMemories(readerRedactor(g.Dir), found), c.JSON)
}

type memoryRmCmd struct {
	ID   string `arg:"" help:"The memory's id (see ralph memory list)."`
	JSON bool   `name:"json" help:"Print the removed memory as one JSON object (as memory list --json has each)."`
}

func (memoryRmCmd) Help() string {
	return "Examples:\n  ralph memory rm m-20261122-101500-3f2a\n  ralph memory rm m-20261122-101500-3f2a --json"
}

func (c *memoryRmCmd) Run(g *globals) error {
	m, err := memoryStore(g.Dir).Remove(c.ID)
	if err != nil {
		return err
	}
	m = redactMemories(readerRedactor(g.Dir), []memory.Memory{m})[0]
	if c.JSON {
		return json.NewEncoder(g.stdout).Encode(m)
	}
	fmt.Fprintln(g.stdout, view.MemoryRemoved(m))
	return nil
}
