package backends

// The command backend (alias custom) runs any program as the agent:
//
//	<Options.Command> [Options.Args…] [Options.PromptFlag] <prompt>
//
// or with the prompt on stdin when PromptMode is "stdin". Its stdout is
// plain text: all of it is the final text, where ralph looks for <event>
// tags, or its end past OutputLimits.TextBytes. A line that happens to look like some CLI's JSON is still just text;
// to read a CLI's JSON, use that CLI's backend with Options.Command.

import (
	"github.com/ralph-loop/ralph/events"
)

func init() {
	register(&cliSpec{
		name:    nameCommand,
		install: "cli.command must name an installed program: a name on PATH, or a path (a relative one is relative to the config file that sets it)",
		args:    commandArgs,
		stdin:   stdinIfAsked,
		parse:   textParser,
		verdict: commandVerdict,
	})
}

// commandArgs passes the prompt as the last argument, after PromptFlag,
// unless it goes on stdin (PromptMode "stdin").
func commandArgs(o Options, prompt string, onStdin bool) []string {
	args := append([]string(nil), o.Args...)
	if onStdin {
		return args
	}
	if o.PromptFlag != "" {
		args = append(args, o.PromptFlag)
	}
	return append(args, prompt)
}

// commandVerdict fails a non-zero exit, quoting the last line of stderr.
func commandVerdict(res *events.AgentResult, exitCode int, stderrTail string) {
	exitFailure(res, nameCommand, exitCode, stderrTail)
}
