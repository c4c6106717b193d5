package autopilot

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/tasks"
)

// Plan is what `ralph autopilot --dry-run` prints: the order tasks would
// start in, which would start at once and in which slot, which a
// component conflict would hold back, and which wait on dependencies.
type Plan struct {
	Source   string        `json:"source"`
	Parallel int           `json:"parallel"`
	MaxTasks int           `json:"max_tasks,omitempty"`
	Tasks    []PlannedTask `json:"tasks"`
	Blocked  []tasks.Task  `json:"blocked,omitempty"`
	// Delivery is how finished work would leave the machine.
	Delivery Delivery `json:"delivery"`
}

// Delivery is how a run delivers verified work (autopilot.deliver).
type Delivery struct {
	// Mode is merge, push or pr.
	Mode string `json:"mode"`
	// Base is the base branch merges are made onto.
	Base string `json:"base,omitempty"`
	// Remote is the git remote push and pr deliver to.
	Remote string `json:"remote,omitempty"`
	// Forge, Repo (a GitHub repository or a GitLab project), CloseOn and
	// Labels are where and how deliver: pr opens pull requests.
	Forge   string   `json:"forge,omitempty"`
	Repo    string   `json:"repo,omitempty"`
	CloseOn string   `json:"close_on,omitempty"`
	Labels  []string `json:"labels,omitempty"`
}

// DeliveryOf is how a run of settings in the repository at dir would
// deliver, as the dry run says it.
func DeliveryOf(ctx context.Context, dir string, s config.Autopilot) Delivery {
	d := newDelivery(s.Deliver, s.Remote)
	out := Delivery{Mode: d.mode, Base: s.BaseBranch}
	if out.Base == "" {
		out.Base, _ = git.Repo{Dir: dir}.CurrentBranch(ctx)
	}
	if d.remotely() {
		out.Remote = d.remote
	}
	if d.mode == deliverPR {
		t := s.PullRequestTarget()
		out.Forge, out.Repo, out.CloseOn, out.Labels = t.Forge, cmp.Or(t.Repo, t.Project), cmp.Or(t.CloseOn, closeOnMerged), t.Labels
	}
	return out
}

// PlannedTask is one ready task in the plan.
type PlannedTask struct {
	Task     tasks.Task `json:"task"`
	Position int        `json:"position"`
	// Slot is the slot it would start in at once; "" when it waits for
	// one.
	Slot string `json:"slot,omitempty"`
	// HeldBy is the task whose components it shares, which it would wait
	// for.
	HeldBy string `json:"held_by,omitempty"`
	// Invalid says why its id, or the agent it names, cannot be used; the
	// task would fail.
	Invalid string `json:"invalid,omitempty"`
	// Beyond says it is past max_tasks and would not start in this run.
	Beyond bool `json:"beyond_max_tasks,omitempty"`
}

// MakePlan lists the source's ready tasks and plans them, changing
// nothing.
func MakePlan(ctx context.Context, source tasks.Source, parallel, maxTasks int) (Plan, error) {
	ready, blocked, err := readyAndBlocked(ctx, source)
	if err != nil {
		return Plan{}, err
	}
	slices.SortStableFunc(ready, func(x, y tasks.Task) int { return cmp.Compare(x.Priority, y.Priority) })
	p := Plan{Source: source.Name(), Parallel: parallel, MaxTasks: maxTasks, Tasks: []PlannedTask{}}
	busy := map[string]string{}
	slot, started := 0, 0
	// Ready's tasks are whole (tasks.Source): one more look at the
	// tracker per task would make planning a backlog cost as many reads
	// of it (processes, requests) as it has tasks.
	for i, t := range ready {
		pt := PlannedTask{Task: t, Position: i + 1}
		invalid := tasks.ValidID(t.ID)
		if invalid == nil {
			_, invalid = TaskAgent(t)
		}
		switch {
		case invalid != nil:
			pt.Invalid = invalid.Error()
		case maxTasks > 0 && started >= maxTasks:
			pt.Beyond = true
		default:
			started++
			pt.HeldBy = holder(busy, t.Components())
			if pt.HeldBy == "" && slot < parallel {
				slot++
				pt.Slot = slotName(slot)
			}
			for _, c := range t.Components() {
				if _, ok := busy[c]; !ok {
					busy[c] = t.ID
				}
			}
		}
		p.Tasks = append(p.Tasks, pt)
	}
	p.Blocked = blocked
	return p, nil
}

// readyAndBlocked lists the source's ready tasks and, where it can say,
// its blocked ones: in one read of the tracker where the source can
// split them (tasks.Splitter).
func readyAndBlocked(ctx context.Context, source tasks.Source) (ready, blocked []tasks.Task, err error) {
	if s, ok := source.(tasks.Splitter); ok {
		return s.Split(ctx)
	}
	if ready, err = source.Ready(ctx); err != nil {
		return nil, nil, err
	}
	if b, ok := source.(tasks.Blocker); ok {
		blocked, err = b.Blocked(ctx)
	}
	return ready, blocked, err
}

func holder(busy map[string]string, components []string) string {
	for _, c := range components {
		if h, ok := busy[c]; ok {
			return h
		}
	}
	return ""
}

func slotName(i int) string { return strconv.Itoa(i) }
