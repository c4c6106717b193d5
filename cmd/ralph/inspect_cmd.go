package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view/api"
)

type inspectCmd struct {
	Prompt inspectPromptCmd `cmd:"" help:"Print the prompt iteration N's agent was given (secrets hidden)."`
	Output inspectOutputCmd `cmd:"" help:"Print what iteration N's agent said and did: its final text and its activity."`
	Diff   inspectDiffCmd   `cmd:"" help:"Print what iteration N changed in the workspace (its commits and its patch), or with M, how iteration N's prompt and M's differ."`
}

func (inspectCmd) Help() string {
	return `Shows, after the fact, what each iteration's agent was told, what it did and
what it changed, for the current run or an earlier one (--run). ralph keeps
every iteration's prompt, with secrets hidden, beside the agent's raw output
under .ralph/runs/<run>/, and records the workspace's git tree before and after
each iteration in its iteration.finished line; inspect reads those. It only
reads, so it works beside a running loop.

Examples:
  ralph inspect prompt 3
  ralph inspect output 3
  ralph inspect diff 3
  ralph inspect diff 2 3                         # how the prompts of 2 and 3 differ
  ralph inspect prompt 1 --run 20261122-1000     # an earlier run (ralph events --runs)
  ralph inspect diff 3 --json | jq -r .patch`
}

// inspectFlags are every inspect command's: which run, and JSON.
type inspectFlags struct {
	RunID string `name:"run" placeholder:"ID" help:"Inspect an earlier run, or a chain's step (an id or a unique prefix; ralph events --runs lists them); the current or last run (or step) by default."`
	JSON  bool   `name:"json" help:"Print one JSON object."`
}

// open reads the run, with the reader's secrets hidden.
func (f inspectFlags) open(ctx context.Context, g *globals) (*api.InspectedRun, *redact.Redactor, error) {
	r := readerRedactor(g.Dir)
	run, err := api.InspectRun(ctx, g.Dir, f.RunID, r)
	return run, r, err
}

// print writes v as JSON or as its text.
func (f inspectFlags) print(w io.Writer, v interface{ WriteText(io.Writer) error }) error {
	if !f.JSON {
		return v.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type inspectPromptCmd struct {
	N flagvalue.AtLeastOne `arg:"" name:"N" help:"The iteration."`
	inspectFlags
}

func (inspectPromptCmd) Help() string {
	return `Prints the prompt iteration N's agent was given, as ralph kept it with secret
values hidden: the objective, the events the hat handled, the hat's
instructions, the scratchpad and memories it was shown. Only the prompt goes
to stdout, so it can be saved or piped; --json adds its file, size, sha256 and
whether the file still matches what the log recorded. An iteration that was
repeated (after an interruption or a rate limit) shows its last attempt's.

Examples:
  ralph inspect prompt 1
  ralph inspect prompt 4 --run 20261122-1000 > prompt.md
  ralph inspect prompt 2 --json | jq .sha256`
}

func (c *inspectPromptCmd) Run(ctx context.Context, g *globals) error {
	run, r, err := c.open(ctx, g)
	if err != nil {
		return err
	}
	p, err := run.Prompt(int(c.N), r)
	if err != nil {
		return err
	}
	if !p.Intact {
		fmt.Fprintf(g.stderr, "ralph: warning: %s is not the file iteration %d's log line describes (%d bytes, sha256 %s): it was cut short or changed since\n",
			p.File, p.Iteration, p.Bytes, p.SHA256)
	}
	return c.print(g.stdout, p)
}

type inspectOutputCmd struct {
	N flagvalue.AtLeastOne `arg:"" name:"N" help:"The iteration."`
	inspectFlags
}

func (inspectOutputCmd) Help() string {
	return `Prints what iteration N's agent said and did: how the iteration ended, the
agent's final text, and its activity (the files it read and wrote, the
commands it ran, what it wrote on the way), with secret values hidden. The
agent's raw output is named at the end.

Examples:
  ralph inspect output 2
  ralph inspect output 2 --json | jq -r .final_text`
}

func (c *inspectOutputCmd) Run(ctx context.Context, g *globals) error {
	run, r, err := c.open(ctx, g)
	if err != nil {
		return err
	}
	o, err := run.Output(int(c.N), r)
	if err != nil {
		return err
	}
	return c.print(g.stdout, o)
}

type inspectDiffCmd struct {
	N flagvalue.AtLeastOne `arg:"" name:"N" help:"The iteration."`
	M flagvalue.AtLeastOne `arg:"" optional:"" name:"M" help:"A second iteration: compare N's prompt with M's."`
	inspectFlags
}

func (inspectDiffCmd) Help() string {
	return `With one iteration, prints what it changed in the workspace: the commits it made
and the patch from the workspace before its agent started to after it ended,
committed or not. ralph records the trees in a git repository only; outside
one there is no diff. With two, prints a unified diff of the two iterations'
prompts: what the second agent was told that the first was not.

Examples:
  ralph inspect diff 3
  ralph inspect diff 3 --json | jq '.commits[].subject'
  ralph inspect diff 1 2`
}

func (c *inspectDiffCmd) Run(ctx context.Context, g *globals) error {
	run, r, err := c.open(ctx, g)
	if err != nil {
		return err
	}
	if c.M > 0 {
		d, err := run.PromptDiff(ctx, int(c.N), int(c.M), r)
		if err != nil {
			return err
		}
		return c.print(g.stdout, d)
	}
	d, err := run.Diff(ctx, int(c.N), r)
	if err != nil {
		return err
	}
	return c.print(g.stdout, d)
}
