package watch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// Start shows the workspace on out: full-screen when out is a terminal
// that can draw one, else as plain lines (Lines).
func Start(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	opts = opts.withDefaults()
	if _, tty := view.TerminalFd(out); !tty || opts.Term == "dumb" || opts.Term == "" {
		return Lines(ctx, out, opts)
	}
	return Run(ctx, in, out, opts)
}

// Run shows the workspace full-screen on the terminal in and out until q
// or ctx ends.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	files, err := newFileWatch()
	if err != nil {
		return fmt.Errorf("watch %s: %w", opts.Dir, err)
	}
	defer files.close()
	p := tea.NewProgram(newModel(opts, files), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // Ctrl-C or a signal: the run goes on, the watcher ends
	}
	return err
}

// plainWidth is the width the plain lines are cut to.
const plainWidth = 100

// Lines prints what Run shows as plain lines, for a terminal that cannot
// draw a screen or for a pipe: the autopilot and its slots or the loop's
// header, then the events of the autopilot (or, with a task, of its loop)
// or of the loop as they come, as `ralph events -f` prints them. When the
// run ends it waits for the next (a new run, or a resume of the same log)
// and follows it too, until ctx ends; with opts.Once it ends with the run.
func Lines(ctx context.Context, out io.Writer, opts Options) (err error) {
	opts = opts.withDefaults()
	now := opts.Now()
	w := view.NewWorkspaceReader(opts.Dir, opts.Redactor).Read(opts.Task)
	bw := bufio.NewWriter(out)
	defer func() {
		// What is still buffered: failing to write it is Lines' failure.
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}()
	for _, l := range plainHeader(w, now) {
		fmt.Fprintln(bw, ansi.Strip(l))
	}
	files := runfiles.In(opts.Dir)
	inChain := w.Loop != nil && w.Loop.Chain != nil && w.Autopilot == nil
	if inChain {
		files = w.Loop.Files // a chain's step keeps its files in its own directory
	}
	path, isAutopilot, err := plainLog(ctx, bw, w, opts, files)
	if err != nil || path == "" {
		return err
	}
	if step, ok := runfiles.ChainStepOf(runfiles.Dir(filepath.Dir(path))); ok && !isAutopilot && opts.Task == "" {
		// A chain that started while watch waited for a run.
		inChain, files = true, step.Dir
	}
	fmt.Fprintln(bw)
	listing := view.EventListing{Printer: &view.EventPrinter{W: bw, Loc: opts.Loc, Autopilot: isAutopilot, Redactor: opts.Redactor},
		Last: 20, Follow: true, Autopilot: isAutopilot, Flush: bw.Flush}
	if !isAutopilot && opts.Task == "" {
		// A loop's next run may be in another log: current-events then
		// names it.
		listing.Watch = files.CurrentEvents()
		listing.Until = func() bool { return movedOn(files, path) }
	}
	for {
		if err := listing.List(ctx, path); err != nil || opts.Once || ctx.Err() != nil {
			return err
		}
		if inChain {
			// A chain's step ended: its next step's loop is what follows.
			next, nextPath, place, err := nextStep(ctx, opts.Dir, files)
			if err != nil || nextPath == "" {
				if place != nil && err == nil && ctx.Err() == nil {
					fmt.Fprintf(bw, "\n%s: the chain has ended, or stopped running (ralph status says how)\n", view.Sanitize(place.Where))
				}
				return err
			}
			files, path, listing.From, listing.Last = next, nextPath, 0, 0
			listing.Watch = files.CurrentEvents()
			fmt.Fprintf(bw, "\n%s, in %s:\n", view.Sanitize(place.Where), view.Sanitize(files.Rel()))
			if err := bw.Flush(); err != nil {
				return err
			}
			continue
		}
		if movedOn(files, path) {
			path, _ = runfiles.CurrentLogIn(files)
			listing.From = 0
			fmt.Fprintf(bw, "\nthe next run, in %s:\n", view.Sanitize(filepath.Base(path)))
		} else {
			listing.From = listing.End
			fmt.Fprintln(bw, "the run has ended; waiting for the next one (a new run, or a resume); Ctrl-C quits")
		}
		listing.Last = 0
		if err := bw.Flush(); err != nil {
			return err
		}
	}
}

// movedOn reports whether the current run of the loop whose files are in
// d logs somewhere other than path: a new run started.
func movedOn(d runfiles.Dir, path string) bool {
	current, err := runfiles.CurrentLogIn(d)
	return err == nil && current != path
}

// plainHeader is the top of the screen as lines.
func plainHeader(w view.Watched, now time.Time) []string {
	m := &model{w: w, width: plainWidth, graphs: api.Graphs{}}
	var lines []string
	if ap := w.Autopilot; ap != nil {
		lines = append(lines, autopilotLines(ap, now, plainWidth)...)
		lines = append(lines, m.slotLines(now)...)
	}
	if l := w.Loop; l != nil {
		lines = append(lines, view.RunPanel(l.Run, now, plainWidth)...)
		lines = append(lines, " objective    "+view.Sanitize(view.FirstLine(orDash(l.Objective))),
			" hats         "+m.hatLine(l))
	}
	return lines
}

// plainLog is the log Lines follows: the task's loop's with a task, the
// autopilot's when one runs here, else the loop's (waiting for one to
// start).
func plainLog(ctx context.Context, out *bufio.Writer, w view.Watched, opts Options, files runfiles.Dir) (string, bool, error) {
	switch {
	case w.Autopilot != nil && opts.Task != "":
		path, _, err := runfiles.TaskLog(opts.Dir, opts.Task)
		return path, false, err
	case w.Autopilot != nil:
		path, err := runfiles.AutopilotEventLog(opts.Dir)
		return path, true, err
	}
	path, err := runfiles.CurrentLogIn(files)
	if errors.Is(err, runfiles.ErrNoLog) {
		path, err = runfiles.AwaitRun(ctx, opts.Dir, func() {
			fmt.Fprintln(out, "no run here yet; waiting for one to start")
			_ = out.Flush()
		})
	}
	return path, false, err
}
