package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/events"
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
	cfg, path, err := loadConfigWith(g.Dir, s.Config, s.Hats)
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
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HAT\tNAME\tTRIGGERS\tPUBLISHES")
	for _, h := range t.reg.Hats() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.ID, h.Name, strings.Join(h.Triggers, ", "), listOr(publishesOf(h), "(anything)"))
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", hats.CoordinatorID, "(coordinator)", "what no hat takes", "(anything)")
	return tw.Flush()
}

// publishesOf is what a hat may publish: its publishes list and its
// default_publishes.
func publishesOf(h hats.Hat) []string {
	out := slices.Clone(h.Publishes)
	if h.DefaultPublishes != "" && !slices.Contains(out, h.DefaultPublishes) {
		out = append(out, h.DefaultPublishes)
	}
	return out
}

func listOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

type hatsShowCmd struct {
	hatsSource
	Hat string `arg:"" placeholder:"HAT" help:"The hat's id (ralph for the coordinator)."`
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
	w := g.stdout
	fmt.Fprintf(w, "%s (%s)\n", h.ID, h.Name)
	if h.Description != "" {
		fmt.Fprintf(w, "  %s\n", h.Description)
	}
	if node, ok := t.graph.Node(h.ID); ok && !node.Reachable && node.Kind == hats.NodeHat {
		fmt.Fprintln(w, "  unreachable: no hand-off from the starting event leads here (see ralph validate)")
	}
	t.showTriggers(w, h)
	t.showPublishes(w, h)
	t.showSettings(w, h)
	fmt.Fprintf(w, "\ninstructions:\n%s\n", indent(strings.TrimRight(h.Instructions, "\n"), "  "))
	return nil
}

// showTriggers lists each trigger with the hand-offs that arrive on it.
func (t *topology) showTriggers(w io.Writer, h hats.Hat) {
	fmt.Fprintln(w, "\ntriggers:")
	if h.ID == hats.CoordinatorID {
		fmt.Fprintf(w, "  %-24s <- ralph, when nothing else is pending\n", hats.ReservedResumeTopic)
		fmt.Fprintf(w, "  %-24s <- any hat, for a topic no hat triggers on\n", "(anything else)")
		return
	}
	for _, trig := range h.Triggers {
		var from []string
		for _, e := range t.graph.Edges {
			if e.To == h.ID && e.Kind != hats.EdgeBlocked && events.Match(trig, e.Topic) {
				from = append(from, fmt.Sprintf("%s (%s)", nodeName(e.From), e.Topic))
			}
		}
		fmt.Fprintf(w, "  %-24s <- %s\n", trig, listOr(from, "nothing"))
	}
}

// showPublishes lists each topic the hat may publish with its receiver.
func (t *topology) showPublishes(w io.Writer, h hats.Hat) {
	fmt.Fprintln(w, "\npublishes:")
	some := false
	for _, e := range t.graph.Edges {
		if e.From != h.ID {
			continue
		}
		some = true
		note := ""
		switch e.Kind {
		case hats.EdgeBlocked:
			note = "  (sent back when its gate fails)"
		case hats.EdgeUnhandled:
			note = "  (no hat triggers on it)"
		case hats.EdgeStart, hats.EdgePublish, hats.EdgeOffered:
			// An ordinary route needs no note.
		}
		fmt.Fprintf(w, "  %-24s -> %s%s\n", e.Topic, nodeName(e.To), note)
	}
	if !some {
		fmt.Fprintln(w, "  anything; ralph offers it every exact trigger and the completion topic")
	}
}

func (t *topology) showSettings(w io.Writer, h hats.Hat) {
	fmt.Fprintln(w)
	if h.DefaultPublishes != "" {
		fmt.Fprintf(w, "default publishes: %s (when the agent publishes nothing)\n", h.DefaultPublishes)
	}
	if h.MaxActivations > 0 {
		fmt.Fprintf(w, "max activations:   %d\n", h.MaxActivations)
	}
	fmt.Fprintf(w, "backend:           %s\n", t.backendOf(h.ID))
	for _, g := range t.cfg.Topology().Gates {
		if g.Hat == h.ID || (g.Hat == "" && publishesMatching(h, g.Topic)) {
			fmt.Fprintf(w, "gate:              %s needs %s\n", g.Topic, listOr(g.Criteria, "the evidence it names"))
		}
	}
}

func publishesMatching(h hats.Hat, pattern string) bool {
	return slices.ContainsFunc(publishesOf(h), func(t string) bool { return events.Match(pattern, t) })
}

func (t *topology) backendOf(id string) string {
	if h, ok := t.cfg.FindHat(id); ok && h.Backend != nil {
		return h.Backend.Backend
	}
	return t.cfg.CLI.Backend + " (cli:)"
}

func nodeName(id string) string {
	switch id {
	case hats.StartNode:
		return "start"
	case hats.DoneNode:
		return "done"
	case hats.CancelNode:
		return "cancelled"
	}
	return id
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
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
	var out string
	switch c.Format {
	case "mermaid":
		out = t.graph.Mermaid()
	case "dot":
		out = t.graph.DOT()
	default:
		out = t.graph.ASCII()
	}
	_, err = io.WriteString(g.stdout, out)
	return err
}
