package watch

import (
	"strings"

	"github.com/ralph-loop/ralph/hats"
)

// position is where hat is in g: the hand-offs that reach it and those it
// makes, as "planner ─plan.ready→ [builder] ─build.done→ reviewer".
func position(g *hats.Graph, hat string) string {
	var in, out []string
	for _, e := range g.Edges {
		if e.To == hat && e.From != hat {
			in = append(in, nodeName(g, e.From)+" ─"+e.Topic+"→")
		}
		if e.From == hat {
			out = append(out, "─"+e.Topic+"→ "+nodeName(g, e.To))
		}
	}
	parts := []string{}
	if len(in) > 0 {
		parts = append(parts, strings.Join(in, ", "))
	}
	parts = append(parts, "["+hat+"]")
	if len(out) > 0 {
		parts = append(parts, strings.Join(out, ", "))
	}
	return strings.Join(parts, " ")
}

// nodeName is a node as the position names it: a hat by its id, the
// others by what they are (the edge into or out of them has the topic).
func nodeName(g *hats.Graph, id string) string {
	n, _ := g.Node(id)
	switch n.Kind {
	case hats.NodeStart:
		return "start"
	case hats.NodeDone:
		return "done"
	case hats.NodeCancel:
		return "cancelled"
	case hats.NodeHat, hats.NodeCoordinator:
	}
	return id
}
