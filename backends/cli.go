package backends

import (
	"io"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// cliSpec describes how to run one agent CLI headlessly and read what it
// prints. There is one file per CLI (claude.go, codex.go, …), each defining
// its spec and registering it in clis.
type cliSpec struct {
	// name is what users write in cli.backend: "claude", "codex", …
	name string
	// binary is the executable looked up on PATH unless Options.Command is set.
	binary string
	// install tells a user how to get the binary, for the "not found" error.
	install string
	// args builds the argument list for one run. With onStdin the prompt
	// goes on stdin and is left out of the list (or stood for by the CLI's
	// own word for stdin, such as codex's "-"); otherwise prompt is the
	// argument to pass, as deliver decided it.
	args func(o Options, prompt string, onStdin bool) []string
	// stdin says when the prompt goes on stdin rather than as an argument
	// (see prompt.go).
	stdin promptStdin
	// denyTools names the CLI's own deny list, which args or env fill from
	// Options.DisallowedTools (e.g. "--disallowedTools"); "" for a CLI that
	// has none, which New then refuses a list for.
	denyTools string
	// denyEnv, for a CLI whose deny list is an environment variable,
	// returns it from Options.DisallowedTools; it goes after cli.env and
	// merges what cli.env set for it, so cli.env cannot weaken it. nil for
	// the others.
	denyEnv func(o Options) []string
	// denyFile is set for a CLI whose deny list is a file (see
	// denyfile.go); nil for the others.
	denyFile *denyFileSpec
	// env returns extra KEY=VALUE pairs the CLI needs to run unattended.
	env func(o Options) []string
	// parse reads the CLI's stdout; see parseFunc.
	parse parseFunc
	// verdict settles the failure kind once the exit code and the tail of
	// stderr are known; the output's own verdict from parse comes first,
	// because several CLIs exit 0 on an API error.
	verdict func(res *events.AgentResult, exitCode int, stderrTail string)
	// usageFile is set for a CLI that writes its token counts to a file
	// rather than on stdout (see usagefile.go); nil for the others.
	usageFile *usageFileSpec
	// reportsCost: the CLI says what every run cost, so ralph need not
	// price it (Claude Code). pi and OpenCode report a cost only for the
	// models their own tables know, so they are not counted.
	reportsCost bool
	// namesModel: the CLI's output names the model that ran, so its runs
	// can be priced without cli.model.
	namesModel bool
	// defaultModel, for a CLI whose output does not name its model, reads
	// the model it runs when not given one from the CLI's own settings;
	// "" when they name none. nil for the others.
	defaultModel func(e diagEnv) string
}

// parseFunc reads a CLI's stdout until EOF, reports activity as it goes
// and returns what it learned: final text, usage, cost, tool counts, and any
// failure the output itself shows (API error, is_error, rate limit). It
// never fails on a line it does not understand. Every CLI's parser has this
// signature, whether it reads JSON lines (jsonl.go's helpers) or plain text
// (textParser), so the fuzzer and the benchmarks take them all from clis.
type parseFunc func(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult

// parseEnv is what a parser is given besides the stream.
type parseEnv struct {
	// now is the clock that relative reset times ("try again in 5m") are
	// read against: time.Now in a run, a fixed time in tests.
	now func() time.Time
	// textLimit bounds a final text gathered from many lines (plain text,
	// gemini's deltas): past it, the text loses its start, because
	// completion tags come at the end. 0: no bound.
	textLimit int
	// activityFull, when set, tells whether the run's activity is past
	// its budget (OutputLimits.ActivityBytes): text, tool and error
	// reports are then left out, only counted, so a parser may report
	// them without building their text.
	activityFull func() bool
}

// muted reports whether text, tool and error reports are left out now.
func (e parseEnv) muted() bool { return e.activityFull != nil && e.activityFull() }

// clis holds every known CLI by name; each CLI's file adds itself in init.
var clis = map[string]*cliSpec{}

func register(s *cliSpec) { clis[s.name] = s }
