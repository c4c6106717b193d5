package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/view/api"
)

type waveCmd struct {
	Emit waveEmitCmd `cmd:"" help:"Publish one event per payload as a wave: a hat with concurrency handles them in parallel, one worker each."`
}

func (waveCmd) Help() string {
	return `A wave is a batch of events of one topic that a hat with concurrency: N
handles in one iteration, up to N agents at once, one per event. What the
workers publish is merged into the run's log, in worker order, and a hat with
aggregate: {mode: wait_for_all} handles it once every worker has finished.
See docs/waves.md.

Examples:
  ralph wave emit review.perspective --payloads "security" "error handling" "docs"`
}

type waveEmitCmd struct {
	Topic string `arg:"" help:"Event topic of every event of the wave, e.g. review.perspective."`
	// --payloads A B C, as ralph-orchestrator spells it: the flag marks
	// where the payloads begin, and each is an argument of its own.
	Payloads bool     `name:"payloads" required:"" help:"The arguments that follow are the payloads: one per event, and so per worker."`
	Items    []string `arg:"" name:"payload" help:"The payloads, after --payloads (put -- before a payload that starts with a dash)."`
	JSON     bool     `name:"json" help:"The payloads are JSON; each is checked and stored as JSON."`
	File     string   `placeholder:"FILE" help:"Event log to append to (default: $RALPH_EVENTS_FILE, then the log named in .ralph/current-events)."`
	Force    bool     `help:"Append even to the log of a run that has ended for good (completed or cancelled), which no loop will read."`
}

func (waveEmitCmd) Help() string {
	return `Appends one event of TOPIC per payload to the running loop's event log, in
one write, each marked with the wave's id (printed on stdout), its index and
the wave's size. The hat that triggers on TOPIC runs them as a wave when it
has concurrency above 1, and one after another otherwise. Each payload is
checked, cut and redacted as ` + "`ralph emit`" + `'s is.

A wave's worker cannot start a wave (RALPH_WAVE_WORKER is set in its
environment): it publishes its result with ` + "`ralph emit`" + `.

Examples:
  ralph wave emit review.perspective --payloads "security of auth/" "error handling of api/" "docs"
  ralph wave emit shard.test --json --payloads '{"pkg": "a"}' '{"pkg": "b"}'`
}

func (c *waveEmitCmd) Run(g *globals) error {
	if api.InWaveWorker(os.Environ()) {
		return api.ErrInWaveWorker
	}
	payloads := make([]json.RawMessage, len(c.Items))
	for i, text := range c.Items {
		p, err := api.Payload(text, c.JSON)
		if err != nil {
			return fmt.Errorf("payload %d: %w", i+1, err)
		}
		payloads[i] = p
	}
	e := (&emitCmd{File: c.File, Force: c.Force}).emitter(g)
	e.Topic = c.Topic
	id, warning, err := e.AppendWave(payloads, time.Now())
	warn(g, warning)
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, id)
	fmt.Fprintf(g.stderr, "ralph: wave %s: %s on %s\n", id, plural.Count(len(payloads), "event", "events"), c.Topic)
	return nil
}
