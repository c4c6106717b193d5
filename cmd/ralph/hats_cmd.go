package main

import (
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hats"
)

type hatsCmd struct {
	List  hatsListCmd  `cmd:"" help:"List the hats: what triggers each and what it publishes."`
	Show  hatsShowCmd  `cmd:"" help:"Show one hat: who hands it work, who gets what it publishes, its instructions."`
	Graph hatsGraphCmd `cmd:"" help:"Draw the hand-offs from the starting event to the completion topic."`
}

func (hatsCmd) Help() string {
	return `Shows the hat topology of a config: which hat triggers on what, what it
publishes, and who receives it. Load a config the way ralph loop does (-c,
-H); ralph validate checks the same topology for mistakes.

Examples:
  ralph hats list
  ralph hats show builder
  ralph hats graph --format mermaid > hats.mmd
  ralph hats graph -H tdd`
}

// hatsSource is the config the hats commands read, as ralph loop would.
type hatsSource struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge."`
	Hats   string   `short:"H" placeholder:"FILE|NAME" help:"Hat collection laid over the config: a preset name (ralph init --list) or a file with hats: and optionally event_loop:."`
}

// topology is a loaded config's hats and the graph of their hand-offs.
type topology struct {
	cfg   *config.Config
	reg   *hats.Registry
	graph *hats.Graph
}

func (s hatsSource) load(g *globals) (*topology, error) {
	cfg, path, err := loadConfigWith(g.Dir, s.Config, s.Hats, nil)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return nil, err
	}
	return &topology{cfg: cfg, reg: reg, graph: hats.BuildGraph(reg, cfg.Topology())}, nil
}

type hatsListCmd struct {
	hatsSource
}

func (hatsListCmd) Help() string {
	return `One line per hat, in config order: its id, name, triggers and publishes,
then the built-in coordinator, which takes what no hat triggers on.

Examples:
  ralph hats list
  ralph hats list -H review`
}

func (c *hatsListCmd) Run(g *globals) error {
	t, err := c.load(g)
	if err != nil {
		return err
	}
	return hats.WriteList(g.stdout, t.reg)
}

type hatsShowCmd struct {
	hatsSource
	Hat string `arg:"" placeholder:"HAT" predictor:"hat" help:"The hat's id (ralph for the coordinator)."`
}

func (hatsShowCmd) Help() string {
	return `Everything about one hat: what wakes it and who sends that, what it may
publish and who receives it, its gates, backend and instructions.

Examples:
  ralph hats show builder
  ralph hats show ralph          # the built-in coordinator`
}

func (c *hatsShowCmd) Run(g *globals) error {
	t, err := c.load(g)
	if err != nil {
		return err
	}
	if err := t.reg.CheckHatID(c.Hat); err != nil {
		return err // it names the hats there are, and the nearest one
	}
	h, _ := t.reg.Get(c.Hat)
	t.graph.WriteHat(g.stdout, h, hats.HatDetails{Gates: t.cfg.Topology().Gates, Backend: t.backendOf(h.ID)})
	return nil
}

func (t *topology) backendOf(id string) string {
	if h, ok := t.cfg.FindHat(id); ok && h.Backend != nil {
		return h.Backend.Backend
	}
	return t.cfg.CLI.Backend + " (cli:)"
}

type hatsGraphCmd struct {
	hatsSource
	Format string `short:"f" enum:"ascii,mermaid,dot" default:"ascii" placeholder:"FORMAT" help:"ascii (readable lines), mermaid (a flowchart for Markdown) or dot (Graphviz)."`
}

func (hatsGraphCmd) Help() string {
	return `Draws the hat topology from the starting event to the completion topic:
each hat, the topics it publishes, and the hat that takes each. A dotted or
dashed edge is a topic sent back when a gate fails, or one no hat triggers on
(the coordinator takes it). Unreachable hats are marked.

Examples:
  ralph hats graph
  ralph hats graph --format mermaid > hats.mmd
  ralph hats graph --format dot | dot -Tsvg > hats.svg
  ralph hats graph -H spec-driven`
}

func (c *hatsGraphCmd) Run(g *globals) error {
	t, err := c.load(g)
	if err != nil {
		return err
	}
	_, err = io.WriteString(g.stdout, t.graph.Render(c.Format))
	return err
}
