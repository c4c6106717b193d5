package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/engine/memory"
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
	return memory.Store{Path: filepath.Join(dir, engine.DirName, "agent", "memories.md")}
}

type memoryAddCmd struct {
	Text string   `arg:"" help:"What to remember."`
	Type string   `default:"context" enum:"pattern,decision,fix,context" help:"pattern, decision, fix or context."`
	Tag  []string `placeholder:"TAG" help:"A tag; repeat for more."`
}

func (memoryAddCmd) Help() string {
	return "Examples:\n  ralph memory add \"The API client retries on 429 by itself\" --type fix --tag api"
}

func (c *memoryAddCmd) Run(g *globals) error {
	if err := engine.IgnoreOwnFilesIfMissing(filepath.Join(g.Dir, engine.DirName)); err != nil {
		return err
	}
	m, err := memoryStore(g.Dir).Add(c.Text, c.Type, c.Tag)
	if err != nil {
		return withHint(err, "ralph memory add TEXT [--type pattern|decision|fix|context] [--tag T]")
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
	return printMemories(g, ms, c.JSON)
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
	return printMemories(g, found, c.JSON)
}

type memoryRmCmd struct {
	ID string `arg:"" help:"The memory's id (see ralph memory list)."`
}

func (memoryRmCmd) Help() string { return "Examples:\n  ralph memory rm m-20261122-101500-3f2a" }

func (c *memoryRmCmd) Run(g *globals) error {
	m, err := memoryStore(g.Dir).Remove(c.ID)
	if err != nil {
		return err
	}
	// Say what was forgotten: an id alone does not show it was the right one.
	fmt.Fprintf(g.stdout, "removed %s (%s%s): %s\n", m.ID, m.Type, tagSuffix(m.Tags), view.FirstLine(m.Text))
	return nil
}

func tagSuffix(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}

func printMemories(g *globals, ms []memory.Memory, asJSON bool) error {
	if asJSON {
		if ms == nil {
			ms = []memory.Memory{}
		}
		return json.NewEncoder(g.stdout).Encode(ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(g.stdout, "no memories")
		return nil
	}
	for _, m := range ms {
		fmt.Fprintf(g.stdout, "%s  %s  %s%s\n  %s\n", m.ID, m.At.Local().Format("2006-01-02 15:04"), m.Type, tagSuffix(m.Tags),
			strings.ReplaceAll(m.Text, "\n", "\n  "))
	}
	return nil
}
