package backends

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/events"
)

// CLIs driven in plain-text mode: their stdout is the agent's answer, with
// no tool, usage or error structure to read. None could be run here
// (docs/agent-clis.md#testing-against-the-fake-model: Kiro and Cursor's
// agent are not on npm, Amp talks only to its own service), so the commands follow their vendors' documentation:
//
//   - Kiro, https://kiro.dev/docs/cli/headless/: "Pass --no-interactive with
//     your initial instruction. The instruction can be a positional argument
//     or supplied through piped stdin"; --trust-all-tools approves every
//     tool for the session; KIRO_API_KEY authenticates. Exit codes,
//     https://kiro.dev/docs/reference/exit-codes/: 1 failure, 3 a server
//     required by --require-mcp-startup did not start, 4 the requested agent
//     was not found. The docs suggest pinning the agent harness with --v3
//     or --v2 (cli.args). Install: https://kiro.dev/docs/cli.
//   - Amp, ampcode.com manual (flag reference as summarised at
//     https://www.developersdigest.tech/reference/amp/cli-flags): "-x,
//     --execute: sends the given message to the agent, waits until the agent
//     ends its turn, prints its final message, and exits", the prompt being
//     optional when input is piped; --dangerously-allow-all approves tool
//     calls (https://developer.sufy.com/compute-service/sandbox/agents/amp,
//     which also names AMP_API_KEY; current Amp runs tools without approval
//     anyway and keeps the flag as a legacy one, per
//     https://ralph-tui.com/docs/plugins/agents/ampcode). Amp picks the
//     model itself, so Options.Model is not passed.
//   - Cursor, https://cursor.com/docs/cli/cookbook/code-review: "Use print
//     mode (-p, --print) for non-interactive scripting", "Combine --print
//     with --force (or --yolo) to modify files in scripts", text is the
//     default print format ("clean, final-answer-only responses"),
//     CURSOR_API_KEY authenticates. Newer installs call the binary `agent`;
//     set the command to use that name.

func init() {
	register(&cliSpec{
		name:    "kiro",
		binary:  "kiro-cli",
		install: "install it with: curl -fsSL https://cli.kiro.dev/install | bash",
		args:    kiroArgs,
		stdin:   stdinWhenLong,
		env:     func(Options) []string { return nil },
		parse:   textParser,
		verdict: textVerdict("kiro", "run `kiro-cli login`, or set KIRO_API_KEY", map[int]string{
			3: "kiro: an MCP server required by --require-mcp-startup did not start (exit 3)",
			4: "kiro: the agent this run names was not found (exit 4); check --agent and the chat.defaultAgent setting",
		}),
	})
	register(&cliSpec{
		name:    "amp",
		binary:  "amp",
		install: "install it with: npm install -g @ampcode/cli",
		args:    ampArgs,
		stdin:   stdinWhenLong,
		env:     func(Options) []string { return nil },
		parse:   textParser,
		verdict: textVerdict("amp", "run `amp login`, or set AMP_API_KEY", nil),
	})
	register(&cliSpec{
		name:    "cursor",
		binary:  "cursor-agent",
		install: "install it with: curl https://cursor.com/install -fsS | bash",
		args:    cursorArgs,
		stdin:   stdinWhenLong,
		env:     func(Options) []string { return nil },
		parse:   textParser,
		verdict: textVerdict("cursor", "run `cursor-agent login`, or set CURSOR_API_KEY", nil),
	})
}

// kiroArgs builds `kiro-cli chat --no-interactive --trust-all-tools [--model
// M] [args…] PROMPT`; with the prompt on stdin it is left out and piped
// instead.
func kiroArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"chat", "--no-interactive", "--trust-all-tools"}
	args = append(args, modelArgs("--model", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return args
	}
	return append(args, prompt)
}

// ampArgs builds `amp -x PROMPT --dangerously-allow-all [args…]`. With the
// prompt on stdin it is `amp --dangerously-allow-all [args…] -x`, -x last
// so that it cannot take a flag for its prompt.
func ampArgs(o Options, prompt string, onStdin bool) []string {
	if onStdin {
		args := append([]string{"--dangerously-allow-all"}, o.Args...)
		return append(args, "-x")
	}
	args := []string{"-x", prompt, "--dangerously-allow-all"}
	return append(args, o.Args...)
}

// cursorArgs builds `cursor-agent -p --output-format text --force [--model
// M] [args…] PROMPT`: -p is a switch and the prompt the last positional
// argument. With the prompt on stdin it is left out: Cursor's docs show
// only the argument, but users report `echo PROMPT | cursor-agent -p …`
// working, and it is the only way for a prompt too long for an argument.
func cursorArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"-p", "--output-format", "text", "--force"}
	args = append(args, modelArgs("--model", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return args
	}
	return append(args, prompt)
}

// maxTextOutput is the default bound of the final text kept from an agent's
// output (OutputLimits.TextBytes); past it the start is dropped, because
// completion markers come at the end.
const maxTextOutput = 1 << 20

// textParser is the parser of a CLI whose stdout is plain text: every
// non-blank line is reported as assistant text as it arrives, and the final
// text is all of stdout, or its end when stdout is longer than
// env.textLimit (cut at a line). There is nothing to read tools, usage or
// failures from; the exit code decides (textVerdict, commandVerdict).
func textParser(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	all := textTail{limit: env.textLimit}
	br := bufio.NewReader(stdout)
	// Lines are read as views of br's buffer, and only a line that is
	// reported becomes a string: one per line was as many bytes allocated
	// as the agent printed. A line longer than the buffer is gathered in
	// long.
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if full || len(long) > 0 {
			long = append(long, line...)
			if full {
				continue
			}
			line = long
		}
		if len(line) > 0 {
			all.add(line)
			reportText(line, report, env)
		}
		long = long[:0]
		if err != nil {
			break
		}
	}
	all.warn(report)
	return events.AgentResult{FinalText: all.String()}
}

// reportText reports a line of a plain-text CLI as assistant text, unless
// it is blank. Past the activity budget the report is left out and only
// counted, so its text is not built.
func reportText(line []byte, report func(events.Activity), env parseEnv) {
	text := bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(text)) == 0 {
		return
	}
	a := events.Activity{Kind: events.ActivityText}
	if !env.muted() {
		a.Text = string(text)
	}
	report(a)
}

// textTail gathers a text and keeps its end: at most limit bytes of it
// (0: all), from a line's start when one is near the cut.
type textTail struct {
	limit int
	buf   []byte
	cut   int // bytes dropped from the start
}

func (t *textTail) add(b []byte) {
	t.grow(len(b))
	t.buf = append(t.buf, b...)
	t.trim()
}

func (t *textTail) addString(s string) {
	t.grow(len(s))
	t.buf = append(t.buf, s...)
	t.trim()
}

// grow makes room for n more bytes by doubling: append grows a large
// slice by a quarter at a time, which allocated five times the text kept
// on the way to twice the limit.
func (t *textTail) grow(n int) {
	if len(t.buf)+n <= cap(t.buf) {
		return
	}
	buf := make([]byte, len(t.buf), max(len(t.buf)+n, 2*cap(t.buf), 4<<10))
	copy(buf, t.buf)
	t.buf = buf
}

// reset empties t, keeping its buffer for the next text.
func (t *textTail) reset() {
	t.buf, t.cut = t.buf[:0], 0
}

func (t *textTail) trim() {
	// Dropping only past twice the limit keeps the copying amortised.
	if t.limit > 0 && len(t.buf) > 2*t.limit {
		drop := len(t.buf) - t.limit
		t.cut += drop
		t.buf = append(t.buf[:0], t.buf[drop:]...)
	}
}

// String is the text kept, after a line saying how much was cut, if any;
// the two together are at most limit bytes long (when the limit has room
// for the line).
func (t *textTail) String() string {
	if t.cut == 0 && (t.limit == 0 || len(t.buf) <= t.limit) {
		return string(t.buf)
	}
	total := t.cut + len(t.buf)
	keep := max(t.limit-len(textCutNote(total, total)), 0)
	kept := t.buf[len(t.buf)-min(keep, len(t.buf)):]
	if i := bytes.IndexByte(kept, '\n'); i >= 0 && i < len(kept)/2 {
		kept = kept[i+1:]
	}
	for len(kept) > 0 && !utf8.RuneStart(kept[0]) {
		kept = kept[1:]
	}
	return textCutNote(len(kept), total-len(kept)) + string(kept)
}

// textCutNote is the line before a final text that lost its start.
func textCutNote(kept, cut int) string {
	return fmt.Sprintf("[ralph kept the last %d bytes of the agent's output; %d bytes before them were cut (max_output_text_bytes)]\n", kept, cut)
}

// warn reports that the text was cut, if it was.
func (t *textTail) warn(report func(events.Activity)) {
	if t.cut == 0 && (t.limit == 0 || len(t.buf) <= t.limit) {
		return
	}
	report(events.Activity{Kind: events.ActivityWarning, Text: fmt.Sprintf(
		"the agent's final text is longer than %d bytes: ralph keeps its end, where <event> tags are looked for (max_output_text_bytes); the whole output is in the iteration's raw output file",
		t.limit)})
}

// textVerdict returns the verdict of a plain-text CLI: exit 0 is success;
// another exit is a rate limit or a credentials problem when the last lines
// of stderr or stdout say so, the message in exits when the code is one the
// CLI documents, and FailureExit otherwise.
func textVerdict(cli, authHint string, exits map[int]string) func(*events.AgentResult, int, string) {
	return func(res *events.AgentResult, exitCode int, stderrTail string) {
		if res.Failure != events.FailureNone || exitCode == 0 {
			return
		}
		if msg, ok := exits[exitCode]; ok {
			res.Failure = events.FailureExit
			res.FailureMessage = msg
			return
		}
		// The failure is certain now, so the answer's last lines may be read
		// for its cause too; stderr's come last and are looked at first.
		out := lastLines(res.FinalText, 5)
		var tail strings.Builder
		for i := len(out) - 1; i >= 0; i-- {
			tail.WriteString(out[i] + "\n")
		}
		tail.WriteString(stderrTail)
		exitVerdict(res, cli, exitCode, tail.String(), authHint)
	}
}
