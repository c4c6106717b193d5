package main

import (
	"encoding/json"
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
	JSON bool `name:"json" help:"Print one JSON array of the hats (id, name, description, triggers, publishes, default_publishes, max_activations, backend, reachable), the coordinator last."`
}

func (hatsListCmd) Help() string {
	return `One line per hat, in config order: its id, name, triggers and publishes,
then the built-in coordinator, which takes what no hat triggers on.

Examples:
  ralph hats list
  ralph hats list -H review
  ralph hats list --json | jq -r '.[].id'`
}

func (c *hatsListCmd) Run(g *globals) error {
	t, err := c.load(g)
	if err != nil {
		return err
	}
	if c.JSON {
		out := make([]hatJSON, 0, len(t.reg.Hats())+1)
		for _, h := range append(t.reg.Hats(), hats.Coordinator()) {
			out = append(out, t.hatJSON(h))
		}
		return writeJSON(g.stdout, out)
	}
	return hats.WriteList(g.stdout, t.reg)
}

// hatJSON is a hat as hats list --json and hats show --json print it.
type hatJSON struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Description      string   `json:"description,omitempty"`
	Triggers         []string `json:"triggers"`
	Publishes        []string `json:"publishes"`
	DefaultPublishes string   `json:"default_publishes,omitempty"`
	MaxActivations   int      `json:"max_activations,omitempty"`
	Backend          string   `json:"backend"`
	DisallowedTools  []string `json:"disallowed_tools,omitempty"`
	Reachable        bool     `json:"reachable"`
	Coordinator      bool     `json:"coordinator,omitempty"`
}

func (t *topology) hatJSON(h hats.Hat) hatJSON {
	node, _ := t.graph.Node(h.ID)
	return hatJSON{ID: h.ID, Name: h.Name, Description: h.Description, Triggers: nonNilStrings(h.Triggers),
		Publishes: nonNilStrings(h.Publishes), DefaultPublishes: h.DefaultPublishes, MaxActivations: h.MaxActivations,
		Backend: t.backendOf(h.ID), DisallowedTools: t.deniedOf(h.ID), Reachable: node.Reachable || h.ID == hats.CoordinatorID, Coordinator: h.ID == hats.CoordinatorID}
}

// hatShowJSON is what hats show --json prints: the hat, the hand-offs that
// reach it and those it makes, its gates and instructions.
type hatShowJSON struct {
	hatJSON
	Receives     []hats.Edge `json:"receives"`
	Sends        []hats.Edge `json:"sends"`
	Gates        []gateJSON  `json:"gates"`
	Instructions string      `json:"instructions"`
}

type gateJSON struct {
	Topic    string   `json:"topic"`
	Hat      string   `json:"hat,omitempty"`
	Criteria []string `json:"criteria"`
	Where    string   `json:"where,omitempty"`
}

func (t *topology) hatShowJSON(h hats.Hat) hatShowJSON {
	out := hatShowJSON{hatJSON: t.hatJSON(h), Receives: []hats.Edge{}, Sends: []hats.Edge{}, Gates: []gateJSON{},
		Instructions: h.Instructions}
	for _, e := range t.graph.Edges {
		if e.To == h.ID {
			out.Receives = append(out.Receives, e)
		}
		if e.From == h.ID {
			out.Sends = append(out.Sends, e)
		}
	}
	for _, g := range t.cfg.Topology().Gates {
		if g.Hat == "" || g.Hat == h.ID {
			out.Gates = append(out.Gates, gateJSON{Topic: g.Topic, Hat: g.Hat, Criteria: nonNilStrings(g.Criteria), Where: g.Where})
		}
	}
	return out
}

// nonNilStrings is s, or an empty list: JSON readers get [] rather than
// null for "none".
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeJSON prints v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

type hatsShowCmd struct {
	hatsSource
	Hat  string `arg:"" placeholder:"HAT" predictor:"hat" help:"The hat's id (ralph for the coordinator)."`
	JSON bool   `name:"json" help:"Print one JSON object: the hat as hats list --json has it, with receives and sends (the hand-offs, as hats graph --json has them), gates and instructions."`
}

func (hatsShowCmd) Help() string {
	return `Everything about one hat: what wakes it and who sends that, what it may
publish and who receives it, its gates, backend and instructions.

Examples:
  ralph hats show builder
  ralph hats show ralph          # the built-in coordinator
  ralph hats show builder --json | jq .sends`
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
	if c.JSON {
		return writeJSON(g.stdout, t.hatShowJSON(h))
	}
	t.graph.WriteHat(g.stdout, h, hats.HatDetails{Gates: t.cfg.Topology().Gates, Backend: t.backendOf(h.ID), DisallowedTools: t.deniedOf(h.ID)})
	return nil
}

// deniedOf are the tools hat id's agent is denied: cli:'s and its own (the
// coordinator, like any hat without a list, has cli:'s).
func (t *topology) deniedOf(id string) []string {
	h, _ := t.cfg.FindHat(id)
	return t.cfg.DisallowedTools(h)
}

func (t *topology) backendOf(id string) string {
	if h, ok := t.cfg.FindHat(id); ok && h.Backend != nil {
		return h.Backend.Backend
	}
	return t.cfg.CLI.Backend + " (cli:)"
}

type hatsGraphCmd struct {
	hatsSource
	Format string `short:"f" enum:"ascii,mermaid,dot,json" default:"ascii" placeholder:"FORMAT" help:"ascii (readable lines), mermaid (a flowchart for Markdown) or dot (Graphviz); json is --json."`
	JSON   bool   `name:"json" help:"Print the graph as one JSON object: nodes (id, label, kind, reachable) and edges (from, to, topic, kind)."`
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
  ralph hats graph -H spec-driven
  ralph hats graph --json | jq '.edges[] | select(.kind == "unhandled")'`
}

func (c *hatsGraphCmd) Run(g *globals) error {
	t, err := c.load(g)
	if err != nil {
		return err
	}
	if c.JSON || c.Format == "json" {
		return writeJSON(g.stdout, t.graph)
	}
	_, err = io.WriteString(g.stdout, t.graph.Render(c.Format))
	return err
}
