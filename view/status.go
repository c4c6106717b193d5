package view

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/runfiles"
)

// WriteStatus writes what `ralph status` says of a workspace's run, one
// fact per line.
func WriteStatus(w io.Writer, s runfiles.Status) {
	if s.Running {
		fmt.Fprintf(w, "running: yes (pid %d)\n", s.PID)
	} else {
		fmt.Fprintln(w, "running: no")
	}
	if c := s.Chain; c != nil {
		fmt.Fprintf(w, "%s (run %s)\n", c.Where, c.ID)
	}
	if s.RunID == "" {
		fmt.Fprintln(w, "no run in this workspace yet; start one with `ralph loop`")
		return
	}
	fmt.Fprintf(w, "run: %s\niteration: %d/%d%s\n", s.RunID, s.Iteration, s.MaxIter, confirmationNote(s.Confirming, s.Confirmations))
	if s.Hat != "" {
		fmt.Fprintf(w, "hat: %s\n", s.Hat)
	}
	if s.Backend != "" {
		fmt.Fprintf(w, "backend: %s\n", s.Backend)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Unavailable)) {
		fmt.Fprintf(w, "backend out: %s (%s)\n", name, unavailableText(s.Unavailable[name]))
	}
	if s.Sandbox != "" {
		fmt.Fprintf(w, "sandbox: %s\n", s.Sandbox)
	}
	fmt.Fprintf(w, "elapsed: %s\ncost: %s\ntokens: %d\npending events: %d\n", s.Elapsed, CostText(s.Cost()), s.Tokens, s.Pending)
	if by := BackendList(s.ByBackend); by != "" {
		fmt.Fprintf(w, "by backend: %s\n", by)
	}
	if q := s.Waiting; q != nil {
		fmt.Fprintf(w, "waiting for an answer to %s from hat %s: %s\n", q.ID, q.Hat, Sanitize(q.Text))
		if len(q.Options) > 0 {
			fmt.Fprintf(w, "  options: %s\n", Sanitize(strings.Join(q.Options, " | ")))
		}
		fmt.Fprintf(w, "  answer with: ralph answer %s \"TEXT\"\n", q.ID)
	}
	if s.Paced != nil {
		fmt.Fprintln(w, PacedText(*s.Paced))
	}
	if s.Wave != nil {
		fmt.Fprintf(w, "wave: %s\n", WaveText(*s.Wave))
	} else if s.LastWave != nil {
		fmt.Fprintf(w, "last wave: iteration %d, %s\n", s.LastWave.Iteration, WaveText(*s.LastWave))
	}
	if s.Ended != nil {
		fmt.Fprintf(w, "ended: %s (exit %d) %s\n", s.Ended.Reason, s.Ended.ExitCode, Sanitize(s.Ended.Message))
	}
	if s.Unfinished {
		writeUnfinished(w, s)
	}
	if len(s.Recent) > 0 {
		fmt.Fprintln(w, "recent events:")
		for _, ev := range s.Recent {
			// Topics and payloads are the agent's text, which may hold
			// escape sequences and newlines.
			fmt.Fprintf(w, "  %s  %-24s %s\n", ev.TS.Local().Format("15:04:05"), Sanitize(ev.Topic), Clip(Sanitize(EventText(ev, false)), 60))
		}
	}
}

// writeUnfinished says that nothing runs a run that has not ended for good,
// and how to go on with it.
func writeUnfinished(w io.Writer, s runfiles.Status) {
	if s.Ended == nil {
		fmt.Fprintf(w, "unfinished: cut off in phase %s (ralph was killed, or the machine went down); nothing runs it now\n", orDash(string(s.Phase)))
	} else {
		fmt.Fprintf(w, "unfinished: %s, not ended for good; nothing runs it now\n", s.Ended.Reason)
	}
	hint := s.Hint
	if hint == "" {
		hint = ResumeHint(s.Mode)
	}
	fmt.Fprintf(w, "  %s\n", hint)
}

// confirmationNote explains an iteration count past max_iterations: the
// iterations that confirm a completion claim are not counted against it,
// and without the note a run past its limit would look like a bug.
func confirmationNote(confirming bool, confirmations int) string {
	switch {
	case confirming:
		return " (confirming the completion claim, not counted against max_iterations)"
	case confirmations > 0:
		return fmt.Sprintf(" (%d confirming a completion claim, not counted against max_iterations)", confirmations)
	}
	return ""
}
