package hats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// reviewLoop is planner → builder → reviewer, the reviewer sending work
// back, with a gate on build.done and a stray hat.
func reviewLoop(t *testing.T) (*Registry, Topology) {
	r := mustRegistry(t,
		Hat{ID: "planner", Name: "Planner", Triggers: l("task.start", "review.approved"), Publishes: l("build.task", "LOOP_COMPLETE")},
		Hat{ID: "builder", Name: "Builder", Triggers: l("build.task", "review.rejected"), Publishes: l("build.done")},
		Hat{ID: "reviewer", Name: "Reviewer", Triggers: l("build.done"), Publishes: l("review.approved", "review.rejected", "review.note")},
		Hat{ID: "end", Name: `The "end"`, Triggers: l("never")},
	)
	topo := topology()
	topo.Gates = []Gate{{Topic: "build.done", Criteria: l("tests_pass")}}
	return r, topo
}

func TestGraphASCII(t *testing.T) {
	r, topo := reviewLoop(t)
	assert.Equal(t, `start
  task.start -> planner
planner (Planner)
  build.task -> builder
  LOOP_COMPLETE -> done
builder (Builder)
  build.done -> reviewer
  build.done.blocked -> builder  (when its gate fails)
reviewer (Reviewer)
  review.approved -> planner
  review.rejected -> builder
  review.note -> ralph  (no hat triggers on it)
end (The "end") [unreachable]
  task.start -> planner  (offered)
  review.approved -> planner  (offered)
  build.task -> builder  (offered)
  review.rejected -> builder  (offered)
  build.done -> reviewer  (offered)
  build.done.blocked -> end  (when its gate fails)
  LOOP_COMPLETE -> done  (offered)
ralph (coordinator: takes what no hat triggers on)
`, BuildGraph(r, topo).ASCII())
}

func TestGraphMermaid(t *testing.T) {
	r, topo := reviewLoop(t)
	assert.Equal(t, `flowchart LR
    _start(["start"])
    planner["Planner"]
    builder["Builder"]
    reviewer["Reviewer"]
    end_["The #quot;end#quot;"]
    ralph{{"ralph (coordinator)"}}
    _done(["done"])
    _start -->|task.start| planner
    planner -->|build.task| builder
    planner -->|LOOP_COMPLETE| _done
    builder -->|build.done| reviewer
    builder -.->|build.done.blocked| builder
    reviewer -->|review.approved| planner
    reviewer -->|review.rejected| builder
    reviewer -.->|review.note| ralph
    end_ -->|task.start| planner
    end_ -->|review.approved| planner
    end_ -->|build.task| builder
    end_ -->|review.rejected| builder
    end_ -->|build.done| reviewer
    end_ -.->|build.done.blocked| end_
    end_ -->|LOOP_COMPLETE| _done
    classDef unreachable stroke-dasharray: 5 5
    class end_ unreachable
`, BuildGraph(r, topo).Mermaid())
}

func TestGraphDOT(t *testing.T) {
	r := mustRegistry(t, Hat{ID: "writer", Name: "Writer", Triggers: l("write.task"), Publishes: l("write.done")})
	topo := topology()
	assert.Equal(t, `digraph ralph {
    rankdir=LR;
    node [shape=box];
    "_start" [label="start", shape=oval];
    "ralph" [label="ralph (coordinator)", shape=hexagon];
    "writer" [label="Writer"];
    "_done" [label="done", shape=oval];
    "_start" -> "ralph" [label="task.start"];
    "ralph" -> "writer" [label="write.task"];
    "ralph" -> "_done" [label="LOOP_COMPLETE"];
    "writer" -> "ralph" [label="write.done", style=dashed];
}
`, BuildGraph(r, topo).DOT())
}

func TestGraphNodes(t *testing.T) {
	r, topo := reviewLoop(t)
	g := BuildGraph(r, topo)
	n, ok := g.Node("end")
	assert.True(t, ok)
	assert.False(t, n.Reachable)
	done, _ := g.Node(DoneNode)
	assert.True(t, done.Reachable)
	_, ok = g.Node("nope")
	assert.False(t, ok)
}
