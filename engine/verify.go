package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// Gate is what events of a topic must pass before ralph accepts them.
type Gate struct {
	// Hat limits the gate to events that hat publishes; "" means any hat.
	Hat      string
	Topic    string // a topic pattern
	Criteria []criteria.Spec
	// Evidence lists texts the payload must contain (ralph-orchestrator's
	// backpressure); criteria ralph runs itself are the default.
	Evidence []string
}

// Verifier runs criteria in the workspace. criteria.CheckAll is the real
// one; tests pass their own.
type Verifier func(ctx context.Context, workspace string, specs []criteria.Spec, env criteria.Env) []criteria.Result

// ignored records v's pre-existing failures, if any, with a completion it
// let through.
func (v verdict) ignored(b *batch) {
	if len(v.preExisting) == 0 {
		return
	}
	var rec runfiles.IgnoredRecord
	for _, r := range v.preExisting {
		rec.Criteria = append(rec.Criteria, r.Name)
	}
	b.add(runfiles.RalphEvent(runfiles.TopicCriteriaIgnored, rec))
}

// baseline runs the acceptance criteria once before the first iteration,
// so that a failure the run did not cause can be told apart from one it did.
func (e *Engine) baseline(ctx context.Context, startCommit string) (events.Event, bool) {
	specs := e.opts.Settings.AcceptanceCriteria
	if len(specs) == 0 {
		return events.Event{}, false
	}
	var rec runfiles.BaselineRecord
	for _, r := range e.verify(ctx, "", specs, startCommit) {
		rec.Results = append(rec.Results, runfiles.BaselineResult{Name: r.Name, Passed: r.Passed})
	}
	return runfiles.RalphEvent(runfiles.TopicCriteriaBaseline, rec), true
}

// verify checks specs on the work of hat's agent ("" for the loop's, the
// baseline): their commands run confined as that agent was, since they
// run what it wrote, and a change they make to what git runs in the
// workspace ends the run (gitguard.go).
func (e *Engine) verify(ctx context.Context, hat string, specs []criteria.Spec, startCommit string) []criteria.Result {
	if err := e.gitAllowed(); err != nil {
		return notChecked(specs, err)
	}
	e.lastSnapshot = nil // a criterion's command may write files
	run := e.opts.Verify
	if run == nil {
		run = criteria.CheckAll
	}
	by := "the checks of the loop"
	if hat != "" {
		by = "the checks of hat " + hat + "'s work"
	}
	sb, watch := e.checkSandbox(hat)
	results := run(ctx, e.opts.Workspace, specs, criteria.Env{RunStartCommit: startCommit, Sandbox: sb,
		Git: e.opts.GitPin, BeforeGit: e.beforeGit(watch, by)})
	if changed := watch.changed(); len(changed) > 0 {
		e.armed(by, changed)
	}
	return results
}

// notChecked are failed results for specs that were not run: why says why.
func notChecked(specs []criteria.Spec, why error) []criteria.Result {
	out := make([]criteria.Result, len(specs))
	for i, s := range specs {
		out[i] = criteria.Result{Spec: s, Name: s.Label(), Evidence: "not checked: " + why.Error()}
	}
	return out
}

// verdict is the outcome of checking a set of criteria.
type verdict struct {
	failed      []criteria.Result // failures that block
	preExisting []criteria.Result // failures the baseline had too and may ignore
}

func (v verdict) passed() bool { return len(v.failed) == 0 }

// judge checks specs and splits the failures: one the run inherited
// (failing in the baseline too) does not block when its criterion says
// baseline: ignore.
func (e *Engine) judge(ctx context.Context, hat string, specs []criteria.Spec) verdict {
	var v verdict
	for _, r := range e.verify(ctx, hat, specs, e.st.StartCommit) {
		switch {
		case r.Passed:
		case r.Spec.Baseline == "ignore" && e.st.FailedAtBaseline(r.Name):
			v.preExisting = append(v.preExisting, r)
		default:
			v.failed = append(v.failed, r)
		}
	}
	return v
}

// report renders failing criteria with their evidence, for payloads and
// the next prompt. The first line names them, so a repeat of the same
// failure is recognisable (thrash detection compares first lines).
func (v verdict) report(what string) string {
	var b strings.Builder
	names := make([]string, len(v.failed))
	for i, r := range v.failed {
		names[i] = r.Name
	}
	fmt.Fprintf(&b, "%s: %s failed\n", what, strings.Join(names, ", "))
	for _, r := range v.failed {
		fmt.Fprintf(&b, "\n## %s: FAILED\n%s\n", r.Name, fence(strings.TrimSpace(r.Evidence)))
	}
	for _, r := range v.preExisting {
		fmt.Fprintf(&b, "\n## %s: failing before the run started too (baseline: ignore), not blocking\n", r.Name)
	}
	return b.String()
}

// fence wraps evidence in a code fence longer than any backtick run in it.
func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + s + "\n" + ticks
}

// gatesFor lists the gates an event must pass: its hat's own, then the
// top-level ones.
func (e *Engine) gatesFor(ev events.Event) []Gate {
	var out []Gate
	for _, g := range e.opts.Settings.Gates {
		if (g.Hat == "" || g.Hat == ev.Hat) && events.Match(g.Topic, ev.Topic) {
			out = append(out, g)
		}
	}
	return out
}

// checkGates runs the gates of ev. It returns "" when the event passes,
// else the report of what failed.
func (e *Engine) checkGates(ctx context.Context, ev events.Event) string {
	gates := e.gatesFor(ev)
	if len(gates) == 0 {
		return ""
	}
	var specs []criteria.Spec
	var missing []string
	text := ev.PayloadText()
	for _, g := range gates {
		specs = append(specs, g.Criteria...)
		for _, want := range g.Evidence {
			if !strings.Contains(text, want) {
				missing = append(missing, want)
			}
		}
	}
	v := e.judge(ctx, ev.Hat, specs)
	for _, m := range missing {
		v.failed = append(v.failed, criteria.Result{Name: fmt.Sprintf("evidence %q", m),
			Evidence: fmt.Sprintf("the payload of %s must contain %q", ev.Topic, m)})
	}
	if v.passed() {
		return ""
	}
	return v.report(ev.Topic + " blocked")
}
