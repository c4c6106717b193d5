package config

import (
	"fmt"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/hats"
)

// Topology is what hats.BuildGraph and hats.Check need besides the hats:
// the event loop's topics, and the gates (each hat's own, then the
// top-level ones) with the criterion types they name and where each is
// written, for messages.
func (c *Config) Topology() hats.Topology {
	el := c.EventLoop
	t := hats.Topology{
		StartingEvent:     el.StartingEvent,
		CompletionTopic:   el.CompletionPromise,
		CancellationTopic: el.CancellationPromise,
		RequiredEvents:    append([]string(nil), el.RequiredEvents...),
		Criteria:          criteria.Types(),
	}
	for _, h := range c.Hats {
		for _, g := range h.Gates {
			t.Gates = append(t.Gates, topologyGate(g, h.ID))
		}
	}
	for _, g := range c.Gates {
		t.Gates = append(t.Gates, topologyGate(g, ""))
	}
	return t
}

func topologyGate(g Gate, hat string) hats.Gate {
	out := hats.Gate{Topic: g.Topic, Hat: hat}
	if g.File != "" {
		out.Where = fmt.Sprintf("%s:%d", g.File, g.Line)
	}
	for _, s := range g.Criteria {
		out.Criteria = append(out.Criteria, s.Type)
	}
	return out
}
