package hats

import (
	"slices"

	"github.com/ralph-loop/ralph/events"
)

// Topology is what the hat graph and the static checks ([Check]) need
// besides the hats: where a run starts, what ends it, and what it must pass
// through on the way.
type Topology struct {
	StartingEvent     string
	CompletionTopic   string
	CancellationTopic string // "" when there is none
	RequiredEvents    []string
	Gates             []Gate
	// Criteria are the criterion types ralph knows, for the check of the
	// criteria gates name; nil skips that check.
	Criteria []string
}

// Gate is a publish gate as the topology sees it: a topic pattern whose
// events ralph holds back until its criteria pass, sending <topic>.blocked
// back to the publishing hat when they fail.
type Gate struct {
	Topic    string   // a topic pattern (events.Match)
	Hat      string   // the hat whose events it applies to; "" for every hat
	Criteria []string // criterion types, e.g. tests_pass
	Where    string   // where the gate is defined ("file:line"), for messages
}

// The graph's nodes that are not hats. Their IDs start with '_', which no
// hat ID can (see the config loader), so they never collide with one.
const (
	StartNode  = "_start"
	DoneNode   = "_done"
	CancelNode = "_cancel"
)

// NodeKind says what a graph node stands for.
type NodeKind string

const (
	NodeStart       NodeKind = "start"       // the starting event
	NodeHat         NodeKind = "hat"         // a configured hat
	NodeCoordinator NodeKind = "coordinator" // the built-in coordinator
	NodeDone        NodeKind = "done"        // the completion topic
	NodeCancel      NodeKind = "cancel"      // the cancellation topic
)

// EdgeKind says why an edge exists.
type EdgeKind string

const (
	// EdgeStart carries the starting event to the hat that takes it.
	EdgeStart EdgeKind = "start"
	// EdgePublish is a topic in the hat's publishes or default_publishes.
	EdgePublish EdgeKind = "publish"
	// EdgeOffered is a topic a hat without a publishes list (or the
	// coordinator) is offered: another hat's exact trigger, or the
	// completion topic (see [Registry.Routes]).
	EdgeOffered EdgeKind = "offered"
	// EdgeBlocked is <topic>.blocked, which ralph sends back to the
	// publishing hat when a gate on topic fails.
	EdgeBlocked EdgeKind = "blocked"
	// EdgeUnhandled is a published topic no hat triggers on; the
	// coordinator takes it at run time.
	EdgeUnhandled EdgeKind = "unhandled"
)

// Node is one node of a [Graph].
type Node struct {
	ID    string   `json:"id"`    // a hat ID, CoordinatorID, StartNode, DoneNode or CancelNode
	Label string   `json:"label"` // the hat's name; the topic for the start, done and cancel nodes
	Kind  NodeKind `json:"kind"`
	// Reachable is false for a hat no chain of hand-offs from the starting
	// event reaches (see [Check] for the rule).
	Reachable bool `json:"reachable"`
}

// Edge is one hand-off: From publishes Topic, and To takes it.
type Edge struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Topic string   `json:"topic"`
	Kind  EdgeKind `json:"kind"`
}

// Graph is the hat topology: who takes the starting event, which topics
// each hat hands to which other, and who reaches the completion topic.
//
// Nodes come in flow order: the start, the hats in the order a depth-first
// walk from the starting event reaches them, the unreachable hats in config order,
// the coordinator when an edge leads to it, then done (and cancel when an
// edge leads there). Edges come grouped by their source, in node order.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// BuildGraph draws the topology of r. Each event goes to one hat, the first
// receiver in config order, so each topic gets one edge. The coordinator's
// own hand-offs are drawn only when it takes the starting event; a topic
// nobody triggers on is drawn as an [EdgeUnhandled] edge into it.
func BuildGraph(r *Registry, t Topology) *Graph {
	a := analyze(r, t)
	g := &Graph{}
	g.Nodes = append(g.Nodes, Node{ID: StartNode, Label: t.StartingEvent, Kind: NodeStart, Reachable: true})
	g.Edges = append(g.Edges, Edge{From: StartNode, To: a.entry, Topic: t.StartingEvent, Kind: EdgeStart})
	for _, id := range a.nodeOrder() {
		g.Nodes = append(g.Nodes, a.node(id))
		g.Edges = append(g.Edges, a.handOffs(id)...)
	}
	if a.coordinatorNeeded(g.Edges) && !a.reached[CoordinatorID] {
		g.Nodes = append(g.Nodes, a.node(CoordinatorID))
	}
	g.Nodes = append(g.Nodes, Node{ID: DoneNode, Label: t.CompletionTopic, Kind: NodeDone, Reachable: a.completes})
	if slices.ContainsFunc(g.Edges, func(e Edge) bool { return e.To == CancelNode }) {
		g.Nodes = append(g.Nodes, Node{ID: CancelNode, Label: t.CancellationTopic, Kind: NodeCancel, Reachable: true})
	}
	return g
}

// Node returns the node with the given ID.
func (g *Graph) Node(id string) (Node, bool) {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// analysis is the walk of the hand-offs from the starting event that both
// the graph and the checks are built on.
type analysis struct {
	r     *Registry
	t     Topology
	entry string // the node that takes the starting event
	// reached holds the nodes a chain of hand-offs reaches, order the order
	// the walk reached them in.
	reached   map[string]bool
	order     []string
	completes bool // a reached node hands off the completion topic
}

func analyze(r *Registry, t Topology) *analysis {
	a := &analysis{r: r, t: t, entry: r.owner(events.Event{Topic: t.StartingEvent}), reached: map[string]bool{}}
	a.visit(a.entry)
	return a
}

// visit walks the hand-offs depth first, so that the order follows each
// chain to its end: planner, builder, reviewer, then the planner's other
// hand-offs, which reads like the flow it is.
func (a *analysis) visit(id string) {
	if a.reached[id] {
		return
	}
	a.reached[id] = true
	a.order = append(a.order, id)
	for _, e := range a.handOffs(id) {
		switch {
		case e.To == DoneNode:
			a.completes = true
		case e.Kind == EdgeUnhandled || e.To == CancelNode:
			// An unhandled topic does reach the coordinator at run time,
			// but counting that would let one stray topic make every hat
			// reachable; it is reported on its own instead.
		default:
			a.visit(e.To)
		}
	}
}

// nodeOrder is the reached nodes, then the configured hats not reached.
func (a *analysis) nodeOrder() []string {
	ids := slices.Clone(a.order)
	for _, h := range a.r.hats {
		if !a.reached[h.ID] {
			ids = append(ids, h.ID)
		}
	}
	return ids
}

func (a *analysis) node(id string) Node {
	if id == CoordinatorID {
		return Node{ID: id, Label: Coordinator().Name, Kind: NodeCoordinator, Reachable: a.reached[id]}
	}
	h, _ := a.r.Get(id)
	return Node{ID: id, Label: h.Name, Kind: NodeHat, Reachable: a.reached[id]}
}

// coordinatorNeeded reports whether an edge leads to the coordinator.
func (a *analysis) coordinatorNeeded(edges []Edge) bool {
	return slices.ContainsFunc(edges, func(e Edge) bool { return e.To == CoordinatorID })
}

// handOffs are the edges out of node id. The coordinator hands off only
// when it takes the starting event: otherwise it runs only when the flow
// the hats define breaks down, which is not a hand-off anyone designed.
func (a *analysis) handOffs(id string) []Edge {
	if id == CoordinatorID && a.entry != CoordinatorID {
		return nil
	}
	h, ok := a.r.Get(id)
	if !ok {
		return nil
	}
	var out []Edge
	for _, p := range a.published(h) {
		out = append(out, a.edge(id, p.topic, p.kind))
		if a.gated(id, p.topic) {
			out = append(out, Edge{From: id, To: id, Topic: p.topic + ".blocked", Kind: EdgeBlocked})
		}
	}
	return out
}

// publication is one topic a hat may publish and why it may.
type publication struct {
	topic string
	kind  EdgeKind
}

// published lists what h may publish: its publishes list, or the topics
// [Registry.Routes] offers a hat without one, then default_publishes.
func (a *analysis) published(h Hat) []publication {
	var out []publication
	add := func(topic string, kind EdgeKind) {
		if topic != "" && !slices.ContainsFunc(out, func(p publication) bool { return p.topic == topic }) {
			out = append(out, publication{topic, kind})
		}
	}
	if len(h.Publishes) > 0 {
		for _, t := range h.Publishes {
			add(t, EdgePublish)
		}
	} else {
		for _, t := range a.r.handOffTopics(h.ID) {
			add(t, EdgeOffered)
		}
		if h.ID == CoordinatorID {
			add(a.t.CompletionTopic, EdgeOffered) // a registry built without WithCompletionTopic
		}
	}
	// ralph never publishes the completion topic on an agent's behalf, so
	// such a default is no hand-off (see RuleDefaultCompletion).
	if h.DefaultPublishes != a.t.CompletionTopic {
		add(h.DefaultPublishes, EdgePublish)
	}
	return out
}

// edge is the hand-off of topic from hat from: to the completion or
// cancellation node, to the topic's first receiver, or to the coordinator
// when no hat triggers on it.
func (a *analysis) edge(from, topic string, kind EdgeKind) Edge {
	e := Edge{From: from, Topic: topic, Kind: kind}
	switch to := a.r.Receivers(topic); {
	case topic == a.t.CompletionTopic:
		e.To = DoneNode
	case topic == a.t.CancellationTopic && topic != "":
		e.To = CancelNode
	default:
		e.To = Owner(to)
		if len(to) == 0 {
			e.Kind = EdgeUnhandled
		}
	}
	return e
}

// gated reports whether a gate holds back topic when hat publishes it.
func (a *analysis) gated(hat, topic string) bool {
	return slices.ContainsFunc(a.t.Gates, func(g Gate) bool {
		return (g.Hat == "" || g.Hat == hat) && events.Match(g.Topic, topic)
	})
}
