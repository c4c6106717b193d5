package watch

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/view"
)

// graphs are the hat graphs of the loops watched, loaded from their
// configs as `ralph hats graph` loads them, once per run; nil for a run
// whose config cannot be loaded (a remote loop's, a SPEC-mode run, a
// config changed into one that no longer loads).
type graphs map[string]*hats.Graph

// of is the graph of loop l's run.
func (gs graphs) of(l *view.LoopView) *hats.Graph {
	if l == nil || l.Workspace == "" || l.Launch == nil || l.Launch.Mode == engine.ModeSpec {
		return nil
	}
	key := l.Workspace + "\x00" + l.Run.ID
	g, ok := gs[key]
	if !ok {
		g = loadGraph(l.Workspace, l.Launch)
		gs[key] = g
	}
	return g
}

// loadGraph loads the config a run was started with (its -c files and its
// -H collection) and draws its hats' graph.
func loadGraph(ws string, launch *engine.Launch) *hats.Graph {
	var col *config.Collection
	if arg := launch.Hats; arg != "" {
		path := arg
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws, path)
		}
		if data, err := os.ReadFile(path); err == nil {
			col = &config.Collection{Name: path, Data: data}
		} else if p, ok := examples.Lookup(arg); ok {
			col = &config.Collection{Name: p.Path(), Data: p.Data, Dir: ws}
		} else {
			return nil
		}
	}
	cfg, path, err := config.LoadIn(ws, launch.Configs, col)
	if err != nil {
		return nil
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return nil
	}
	return hats.BuildGraph(reg, cfg.Topology())
}

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
