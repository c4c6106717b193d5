package hats

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ralph-loop/ralph/events"
)

// WriteList writes one line per hat, in registry order (its id, name,
// triggers and what it may publish), then the built-in coordinator, which
// takes what no hat triggers on: what `ralph hats list` shows.
func WriteList(w io.Writer, reg *Registry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HAT\tNAME\tTRIGGERS\tPUBLISHES")
	for _, h := range reg.Hats() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.ID, h.Name, strings.Join(h.Triggers, ", "), listOr(publishesOf(h), "(anything)"))
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", CoordinatorID, "(coordinator)", "what no hat takes", "(anything)")
	return tw.Flush()
}

// HatDetails is what [WriteHat] shows of a hat besides the hat itself and
// the graph: the gates of its topology, the backend it runs on and the
// tools its agent is denied.
type HatDetails struct {
	Gates   []Gate
	Backend string // as the user should read it, e.g. "claude (cli:)"
	// DisallowedTools are cli.disallowed_tools and the hat's own.
	DisallowedTools []string
}

// WriteHat writes everything about one hat, as `ralph hats show` shows it:
// what wakes it and who sends that, what it may publish and who receives
// it, its settings, gates, backend and instructions.
func (g *Graph) WriteHat(w io.Writer, h Hat, d HatDetails) {
	fmt.Fprintf(w, "%s (%s)\n", h.ID, h.Name)
	if h.Description != "" {
		fmt.Fprintf(w, "  %s\n", h.Description)
	}
	if node, ok := g.Node(h.ID); ok && !node.Reachable && node.Kind == NodeHat {
		fmt.Fprintln(w, "  unreachable: no hand-off from the starting event leads here (see ralph validate)")
	}
	g.writeTriggers(w, h)
	g.writePublishes(w, h)
	writeSettings(w, h, d)
	fmt.Fprintf(w, "\ninstructions:\n%s\n", indent(strings.TrimRight(h.Instructions, "\n"), "  "))
}

// writeTriggers lists each trigger with the hand-offs that arrive on it.
func (g *Graph) writeTriggers(w io.Writer, h Hat) {
	fmt.Fprintln(w, "\ntriggers:")
	if h.ID == CoordinatorID {
		fmt.Fprintf(w, "  %-24s <- ralph, when nothing else is pending\n", ReservedResumeTopic)
		fmt.Fprintf(w, "  %-24s <- any hat, for a topic no hat triggers on\n", "(anything else)")
		return
	}
	for _, trig := range h.Triggers {
		var from []string
		for _, e := range g.Edges {
			if e.To == h.ID && e.Kind != EdgeBlocked && events.Match(trig, e.Topic) {
				from = append(from, fmt.Sprintf("%s (%s)", nodeName(e.From), e.Topic))
			}
		}
		fmt.Fprintf(w, "  %-24s <- %s\n", trig, listOr(from, "nothing"))
	}
}

// writePublishes lists each topic the hat may publish with its receiver.
func (g *Graph) writePublishes(w io.Writer, h Hat) {
	fmt.Fprintln(w, "\npublishes:")
	some := false
	for _, e := range g.Edges {
		if e.From != h.ID {
			continue
		}
		some = true
		note := ""
		switch e.Kind {
		case EdgeBlocked:
			note = "  (sent back when its gate fails)"
		case EdgeUnhandled:
			note = "  (no hat triggers on it)"
		case EdgeStart, EdgePublish, EdgeOffered:
			// An ordinary route needs no note.
		}
		fmt.Fprintf(w, "  %-24s -> %s%s\n", e.Topic, nodeName(e.To), note)
	}
	if !some {
		fmt.Fprintln(w, "  anything; ralph offers it every exact trigger and the completion topic")
	}
}

func writeSettings(w io.Writer, h Hat, d HatDetails) {
	fmt.Fprintln(w)
	if h.DefaultPublishes != "" {
		fmt.Fprintf(w, "default publishes: %s (when the agent publishes nothing)\n", h.DefaultPublishes)
	}
	if h.MaxActivations > 0 {
		fmt.Fprintf(w, "max activations:   %d\n", h.MaxActivations)
	}
	if h.Waves() {
		fmt.Fprintf(w, "concurrency:       %d (a wave of its events runs one agent per event, %d at once)\n", h.Concurrency, h.Concurrency)
	}
	if a := h.Aggregate; a != nil {
		fmt.Fprintf(w, "aggregate:         %s, timeout %s (collects a wave's results)\n", a.Mode, cmp.Or(a.Timeout, DefaultWaveTimeout))
	}
	fmt.Fprintf(w, "backend:           %s\n", d.Backend)
	if len(d.DisallowedTools) > 0 {
		fmt.Fprintf(w, "denied tools:      %s\n", strings.Join(d.DisallowedTools, ", "))
	}
	for _, g := range d.Gates {
		if g.Hat == h.ID || (g.Hat == "" && publishesMatching(h, g.Topic)) {
			fmt.Fprintf(w, "gate:              %s needs %s\n", g.Topic, listOr(g.Criteria, "the evidence it names"))
		}
	}
}

// publishesOf is what a hat may publish: its publishes list and its
// default_publishes.
func publishesOf(h Hat) []string {
	out := slices.Clone(h.Publishes)
	if h.DefaultPublishes != "" && !slices.Contains(out, h.DefaultPublishes) {
		out = append(out, h.DefaultPublishes)
	}
	return out
}

func publishesMatching(h Hat, pattern string) bool {
	return slices.ContainsFunc(publishesOf(h), func(t string) bool { return events.Match(pattern, t) })
}

func listOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

func nodeName(id string) string {
	switch id {
	case StartNode:
		return "start"
	case DoneNode:
		return "done"
	case CancelNode:
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
