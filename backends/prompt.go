package backends

import (
	"fmt"

	"github.com/ralph-loop/ralph/internal/excerpt"
)

// How the prompt reaches the agent CLI: on stdin, or as an argument.
//
// stdin has no length limit and keeps the prompt out of ps. An argument
// has a limit: Linux refuses to start a program with one argument over
// 128 KiB (MAX_ARG_STRLEN), with E2BIG, "argument list too long". So a
// prompt too long for an argument never goes as one: every CLI that reads a
// piped prompt gets it on stdin, and the command backend, whose program
// may not read stdin, gets as much of it as fits.

// maxArgPrompt is the longest prompt passed as one argument. It is under
// Linux's 128 KiB for one argument with room to spare, because all of the
// arguments and the environment share a limit too (ARG_MAX, a quarter of
// the stack limit: 2 MiB with the usual 8 MiB stack, never less than
// 128 KiB); macOS allows 1 MiB for everything. hats keeps the prompts it
// builds under it (hats/prompt_limits.go), so it is a safety net.
const maxArgPrompt = 100 << 10

// promptStdin says when a CLI gets its prompt on stdin.
type promptStdin int

const (
	// stdinAlways: the CLI reads a piped prompt, as its documentation says
	// and ralph's end-to-end tests see with the pinned version. The prompt
	// goes on stdin unless prompt_mode is arg, and then too when it is
	// too long for an argument.
	stdinAlways promptStdin = iota
	// stdinWhenLong: the CLI is documented to read a piped prompt, but
	// ralph's tests cannot run it (kiro, amp, cursor). The prompt is an
	// argument, as in the CLI's own headless examples, unless prompt_mode
	// is stdin or it is too long for an argument.
	stdinWhenLong
	// stdinIfAsked: a program ralph knows nothing of (the command
	// backend). The prompt goes on stdin only with prompt_mode stdin; as
	// an argument, a prompt too long for one is cut to fit.
	stdinIfAsked
)

// delivery is where one run's prompt goes: on stdin, or as the argument
// arg (the prompt, or the excerpt of it that fits). warning tells the user
// when the prompt did not go where it usually does.
type delivery struct {
	onStdin bool
	arg     string
	warning string
}

// cutMarker stands for what an argument leaves out of a prompt too long
// for one, so the agent knows it is reading an excerpt.
const cutMarker = "\n\n[… %d bytes of this prompt are left out here: it is too long for a command-line argument …]\n\n"

// deliver decides where prompt goes for CLI s with options o.
func deliver(s *cliSpec, o Options, prompt string) delivery {
	fits := len(prompt) <= maxArgPrompt
	switch {
	case o.PromptMode == "stdin", s.stdin == stdinAlways && o.PromptMode != "arg":
		return delivery{onStdin: true}
	case fits:
		return delivery{arg: prompt}
	case s.stdin == stdinAlways:
		return delivery{onStdin: true, warning: fmt.Sprintf(
			"the prompt is %d bytes, too long for a command-line argument (at most %d): %s gets it on stdin, although prompt_mode is arg",
			len(prompt), maxArgPrompt, s.name)}
	case s.stdin == stdinWhenLong:
		return delivery{onStdin: true, warning: fmt.Sprintf(
			"the prompt is %d bytes, too long for a command-line argument (at most %d): %s gets it on stdin instead; set cli.prompt_mode: stdin to always pass it there",
			len(prompt), maxArgPrompt, s.name)}
	}
	head, tail, omitted := excerpt.Cut(prompt, maxArgPrompt-len(cutMarker)-20)
	return delivery{arg: head + fmt.Sprintf(cutMarker, omitted) + tail, warning: fmt.Sprintf(
		"the prompt is %d bytes, too long for a command-line argument (at most %d): the command got its first %d and last %d bytes; set cli.prompt_mode: stdin to pass it whole on stdin",
		len(prompt), maxArgPrompt, len(head), len(tail))}
}
