package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

type eventsCmd struct {
	JSON  bool   `name:"json" help:"Print the raw JSON lines, ready for jq."`
	Topic string `placeholder:"GLOB" help:"Only events whose topic matches GLOB (e.g. 'build.*')."`
	File  string `placeholder:"FILE" help:"Read this event log instead of the current run's."`
}

func (eventsCmd) Help() string {
	return `Lists the events of the current run: what ralph and the agent published,
how each agent event was routed or why it was rejected, and how iterations
ended.

Examples:
  ralph events
  ralph events --topic 'build.*'
  ralph events --json | jq -c 'select(.topic == "iteration.finished") | .payload'`
}

func (c *eventsCmd) Run(g *globals) error {
	path, err := c.logPath(g.Dir)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open event log: %w", err)
	}
	defer f.Close()
	out := bufio.NewWriter(g.stdout)
	defer out.Flush()
	if c.JSON {
		return c.printJSON(f, out)
	}
	return c.printTable(f, out)
}

func (c *eventsCmd) logPath(dir string) (string, error) {
	if c.File != "" {
		return c.File, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, engine.DirName, engine.CurrentEventsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", withHint(errors.New("no run here: .ralph/current-events does not exist"),
			"start one with `ralph loop`, or pass --file")
	}
	if err != nil {
		return "", fmt.Errorf("read current-events: %w", err)
	}
	return filepath.Join(dir, strings.TrimSpace(string(data))), nil
}

func (c *eventsCmd) keep(rec events.Record) bool {
	return c.Topic == "" || (rec.Err == nil && events.Match(c.Topic, rec.Event.Topic))
}

func (c *eventsCmd) printJSON(r io.Reader, w io.Writer) error {
	return events.Scan(r, func(rec events.Record) error {
		if !c.keep(rec) {
			return nil
		}
		_, err := fmt.Fprintf(w, "%s\n", rec.Line)
		return err
	})
}

func (c *eventsCmd) printTable(r io.Reader, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tITER\tHAT\tSOURCE\tTOPIC\tPAYLOAD")
	err := events.Scan(r, func(rec events.Record) error {
		if !c.keep(rec) {
			return nil
		}
		if rec.Err != nil {
			_, err := fmt.Fprintf(tw, "-\t-\t-\t-\t(malformed)\t%s\n", clip(string(rec.Line), 60))
			return err
		}
		ev := rec.Event
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ev.TS.Local().Format("15:04:05"),
			intOrDash(ev.Iteration), orDash(ev.Hat), orDash(ev.Source), ev.Topic, clip(ev.PayloadText(), 80))
		return err
	})
	if err != nil {
		return err
	}
	return tw.Flush()
}

func intOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// clip shortens s to one line of at most n runes for a table cell.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
