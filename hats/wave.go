package hats

import (
	"fmt"
	"strings"
	"time"
)

// Aggregators are the hats with aggregate: that trigger on a topic h
// publishes: those that collect the results of h's waves.
func (r *Registry) Aggregators(h Hat) []Hat {
	var out []Hat
	for _, a := range r.hats {
		if a.Aggregate == nil || a.ID == h.ID {
			continue
		}
		for _, p := range h.Publishes {
			if matchesAny(a.Triggers, p) {
				out = append(out, cloneHat(a))
				break
			}
		}
	}
	return out
}

// WorkerTimeout bounds one worker of h's waves: h's own timeout, else the
// aggregate timeout of the hat that collects its results, else
// DefaultWaveTimeout (ralph-orchestrator's order).
func (r *Registry) WorkerTimeout(h Hat) time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return r.waveWait(h)
}

// WaveDeadline is how long after one of h's waves started its results
// are waited for: the aggregate timeout of the hat that collects them;
// 0 when no hat does, and the wave waits for every worker.
func (r *Registry) WaveDeadline(h Hat) time.Duration {
	if len(r.Aggregators(h)) == 0 {
		return 0
	}
	return r.waveWait(h)
}

func (r *Registry) waveWait(h Hat) time.Duration {
	for _, a := range r.Aggregators(h) {
		if a.Aggregate.Timeout > 0 {
			return a.Aggregate.Timeout
		}
	}
	return DefaultWaveTimeout
}

// WaveRoutes are the topics h may publish that a wave hat (not h) takes.
func (r *Registry) WaveRoutes(h Hat) []WaveRoute {
	var out []WaveRoute
	for _, route := range r.Routes(h) {
		for _, id := range route.Receivers {
			if w, ok := r.Get(id); ok && w.Waves() && w.ID != h.ID {
				out = append(out, WaveRoute{Topic: route.Topic, Hat: w.ID, Concurrency: w.Concurrency})
			}
		}
	}
	return out
}

// workerText is the section that tells one worker of a wave what it is and
// what it must not do.
func workerText(in PromptInput) string {
	w := in.Worker
	return fmt.Sprintf("You are worker %d of %d of wave `%s`: the hat's other workers handle the wave's other events at the same time, each in its own process. "+
		"Handle only the one event below; your result is merged with theirs for the hat that collects them.\n\n"+
		"- You share the working tree with the other workers, live: change only the files your event is about, and do not commit, stash, reset, check out or clean. The hat that collects the results does what needs the whole tree.\n"+
		"- Do not start waves: `%s wave emit` refuses inside a worker. Publish your result with `%s emit`.",
		w.Index+1, w.Total, w.WaveID, emitCommand(in), emitCommand(in))
}

// waveDispatchText tells a hat whose topics go to a wave hat how to start
// a wave.
func waveDispatchText(in PromptInput) string {
	var b strings.Builder
	b.WriteString("These topics go to a hat that handles a wave of events in parallel, one worker per event:\n\n")
	for _, r := range in.WaveRoutes {
		fmt.Fprintf(&b, "- `%s` → %s (up to %d workers at once)\n", r.Topic, r.Hat, r.Concurrency)
	}
	topic := in.WaveRoutes[0].Topic
	fmt.Fprintf(&b, "\nTo hand off several independent items at once, publish them as one wave, one payload per item:\n\n    %s wave emit %s --payloads \"<item 1>\" \"<item 2>\" \"<item 3>\"\n\n", emitCommand(in), topic)
	b.WriteString("Each payload is all its worker is told about its item. Start one wave per iteration.")
	return b.String()
}
