package hats

import (
	"fmt"
	"strings"
)

// Render renders the graph in a format: "mermaid", "dot", or else ASCII.
func (g *Graph) Render(format string) string {
	switch format {
	case "mermaid":
		return g.Mermaid()
	case "dot":
		return g.DOT()
	}
	return g.ASCII()
}

// ASCII renders the graph as plain text: each node on its own line, then
// one indented line per hand-off, "topic -> receiver", with what is
// special about it in parentheses.
func (g *Graph) ASCII() string {
	var b strings.Builder
	for _, n := range g.Nodes {
		if n.Kind == NodeDone || n.Kind == NodeCancel {
			continue
		}
		b.WriteString(g.asciiNode(n))
		b.WriteByte('\n')
		for _, e := range g.Edges {
			if e.From == n.ID {
				fmt.Fprintf(&b, "  %s -> %s%s\n", e.Topic, g.asciiName(e.To), asciiNote(e))
			}
		}
	}
	return b.String()
}

func (g *Graph) asciiNode(n Node) string {
	switch {
	case n.Kind == NodeStart:
		return "start"
	case n.Kind == NodeCoordinator && !g.hasEdgesFrom(n.ID):
		return n.ID + " (coordinator: takes what no hat triggers on)"
	case n.Kind == NodeCoordinator:
		return n.ID + " (coordinator)"
	}
	s := n.ID
	if n.Label != "" && n.Label != n.ID {
		s += " (" + n.Label + ")"
	}
	if !n.Reachable {
		s += " [unreachable]"
	}
	return s
}

// asciiName is how an edge names its target.
func (g *Graph) asciiName(id string) string {
	switch id {
	case DoneNode:
		return "done"
	case CancelNode:
		return "cancelled"
	}
	return id
}

func asciiNote(e Edge) string {
	switch e.Kind {
	case EdgeBlocked:
		return "  (when its gate fails)"
	case EdgeUnhandled:
		return "  (no hat triggers on it)"
	case EdgeOffered:
		return "  (offered)"
	case EdgeStart, EdgePublish:
		// An ordinary route needs no note.
	}
	return ""
}

func (g *Graph) hasEdgesFrom(id string) bool {
	for _, e := range g.Edges {
		if e.From == id {
			return true
		}
	}
	return false
}

// Mermaid renders the graph as a Mermaid flowchart, left to right. Gate
// and unhandled hand-offs are dotted; unreachable hats are dashed.
func (g *Graph) Mermaid() string {
	ids := mermaidIDs(g.Nodes)
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	var unreachable []string
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "    %s%s\n", ids[n.ID], mermaidShape(n))
		if !n.Reachable && n.Kind == NodeHat {
			unreachable = append(unreachable, ids[n.ID])
		}
	}
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Kind == EdgeBlocked || e.Kind == EdgeUnhandled {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "    %s %s|%s| %s\n", ids[e.From], arrow, mermaidText(e.Topic), ids[e.To])
	}
	if len(unreachable) > 0 {
		b.WriteString("    classDef unreachable stroke-dasharray: 5 5\n")
		fmt.Fprintf(&b, "    class %s unreachable\n", strings.Join(unreachable, ","))
	}
	return b.String()
}

func mermaidShape(n Node) string {
	switch n.Kind {
	case NodeStart:
		return `(["start"])`
	case NodeDone:
		return `(["done"])`
	case NodeCancel:
		return `(["cancelled"])`
	case NodeCoordinator:
		return `{{"ralph (coordinator)"}}`
	case NodeHat:
		// A box with the hat's label, below.
	}
	return `["` + mermaidText(n.Label) + `"]`
}

// mermaidText escapes what would end a label early.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "|", "#124;").Replace(s)
}

// mermaidKeywords cannot be node IDs in a flowchart.
var mermaidKeywords = []string{"end", "graph", "subgraph", "flowchart", "style", "class",
	"classdef", "click", "linkstyle", "direction", "call", "href", "default"}

// mermaidIDs gives every node an ID Mermaid accepts: hat IDs as they are
// where possible, '-' turned into '_', keywords suffixed, clashes numbered.
func mermaidIDs(nodes []Node) map[string]string {
	ids, used := map[string]string{}, map[string]bool{}
	for _, n := range nodes {
		id := strings.ReplaceAll(n.ID, "-", "_")
		for _, k := range mermaidKeywords {
			if strings.EqualFold(id, k) {
				id += "_"
			}
		}
		base := id
		for i := 2; used[id]; i++ {
			id = fmt.Sprintf("%s%d", base, i)
		}
		used[id] = true
		ids[n.ID] = id
	}
	return ids
}

// DOT renders the graph for Graphviz (dot -Tsvg).
func (g *Graph) DOT() string {
	var b strings.Builder
	b.WriteString("digraph ralph {\n    rankdir=LR;\n    node [shape=box];\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "    %s [%s];\n", dotQuote(n.ID), dotNodeAttrs(n))
	}
	for _, e := range g.Edges {
		attrs := "label=" + dotQuote(e.Topic)
		if e.Kind == EdgeBlocked || e.Kind == EdgeUnhandled {
			attrs += ", style=dashed"
		}
		fmt.Fprintf(&b, "    %s -> %s [%s];\n", dotQuote(e.From), dotQuote(e.To), attrs)
	}
	b.WriteString("}\n")
	return b.String()
}

func dotNodeAttrs(n Node) string {
	switch n.Kind {
	case NodeStart:
		return `label="start", shape=oval`
	case NodeDone:
		return `label="done", shape=oval`
	case NodeCancel:
		return `label="cancelled", shape=oval`
	case NodeCoordinator:
		return `label="ralph (coordinator)", shape=hexagon`
	case NodeHat:
		// The hat's label, dashed when unreachable, below.
	}
	attrs := "label=" + dotQuote(n.Label)
	if !n.Reachable {
		attrs += ", style=dashed"
	}
	return attrs
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
