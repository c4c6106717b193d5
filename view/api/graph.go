package api

import (
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Graphs are the hat graphs of the loops watched, loaded from their
// configs as `ralph hats graph` loads them, once per run; nil for a run
// whose config cannot be loaded (a remote loop's, a SPEC-mode run, a
// config changed into one that no longer loads).
type Graphs map[string]*hats.Graph

// Of is the graph of loop l's run.
func (gs Graphs) Of(l *view.LoopView) *hats.Graph {
	if l == nil || l.Workspace == "" || l.Launch == nil || l.Launch.Mode == runfiles.ModeSpec {
		return nil
	}
	key := l.Workspace + "\x00" + l.Run.ID
	g, ok := gs[key]
	if !ok {
		g = LoadGraph(l.Workspace, l.Launch)
		gs[key] = g
	}
	return g
}

// LoadGraph loads the config a run was started with (its -c files and its
// -H collection) and draws its hats' graph; nil when it no longer loads.
func LoadGraph(ws string, launch *runfiles.Launch) *hats.Graph {
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
	cfg, path, err := config.LoadIn(ws, launch.Configs, col, config.Options{Sets: launch.Sets})
	if err != nil {
		return nil
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return nil
	}
	return hats.BuildGraph(reg, cfg.Topology())
}
