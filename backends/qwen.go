package backends

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// Qwen Code: `qwen --output-format stream-json PROMPT` prints Claude-Code
// shaped JSON lines: system/init, assistant {message:{content:[text|
// tool_use], usage}}, user {message:{content:[tool_result]}} and a final
// result {subtype, is_error, result, usage}; see docs/agent-clis.md#qwen.
// An API error does not change the exit code (0) nor is_error (false): the
// result text starts with "[API Error:".

const qwenAuthHint = "run `qwen` once to sign in, or set OPENAI_API_KEY (with OPENAI_BASE_URL and OPENAI_MODEL)"

func init() {
	register(&cliSpec{
		name:    "qwen",
		binary:  "qwen",
		install: "install it with: npm install -g @qwen-code/qwen-code",
		args:    qwenArgs,
		// Excluded tools are not offered to the model (Qwen Code 0.15).
		denyTools:  "--exclude-tools",
		stdin:      stdinAlways,
		env:        func(Options) []string { return nil },
		parse:      parseQwen,
		namesModel: true,
		verdict: func(res *events.AgentResult, exitCode int, stderrTail string) {
			exitVerdict(res, "qwen", exitCode, stderrTail, qwenAuthHint)
		},
	})
}

// qwenArgs builds `qwen [--exclude-tools TOOL…] --output-format stream-json --yolo [-m M]
// [args…]`: like the Gemini CLI it derives from, qwen takes a piped stdin
// as the prompt. As an argument the prompt is positional (-p is deprecated)
// and goes last, after the user's arguments.
func qwenArgs(o Options, prompt string, onStdin bool) []string {
	args := denyArgs("--exclude-tools", o.DisallowedTools)
	args = append(args, "--output-format", "stream-json", "--yolo")
	args = append(args, modelArgs("-m", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return args
	}
	return append(args, prompt)
}

var qwenTools = map[string]events.ToolKind{
	"write_file": events.ToolWrite, "edit": events.ToolWrite, "replace": events.ToolWrite,
	"read_file": events.ToolRead, "read_many_files": events.ToolRead, "glob": events.ToolRead,
	"grep_search": events.ToolRead, "list_directory": events.ToolRead,
	"run_shell_command": events.ToolShell,
}

type qwenUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// usage normalizes qwen's figures: its input_tokens is Gemini's
// promptTokenCount, which includes the cached tokens (qwen adds an
// Anthropic provider's cache reads to it as well), so they are taken out.
func (u *qwenUsage) usage() events.Usage {
	if u == nil {
		return events.Usage{}
	}
	return events.Usage{
		InputTokens:      max(u.InputTokens-u.CacheReadInputTokens, 0),
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

type qwenLine struct {
	qwenFields
	Message *qwenMessage `json:"message"`
}

// qwenMutedLine is a line read past the activity budget, as
// claudeMutedLine is.
type qwenMutedLine struct {
	qwenFields
	Message *qwenMutedMessage `json:"message"`
}

// qwenFields are the fields of a line besides its message.
type qwenFields struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Model           string          `json:"model"` // system init
	IsError         bool            `json:"is_error"`
	Result          json.RawMessage `json:"result"`
	Usage           *qwenUsage      `json:"usage"`
	TotalCostUSD    float64         `json:"total_cost_usd"`
}

type qwenMessage struct {
	qwenMessageHead
	Content []struct {
		Type  string     `json:"type"`
		Text  longString `json:"text"`
		ID    string     `json:"id"`
		Name  string     `json:"name"`
		Input toolArgs   `json:"input"`
	} `json:"content"`
}

type qwenMutedMessage struct {
	qwenMessageHead
	Content []struct {
		Type string         `json:"type"`
		Text nonEmptyString `json:"text"`
		ID   string         `json:"id"`
		Name string         `json:"name"`
	} `json:"content"`
}

// qwenMessageHead is what a message says besides its content.
type qwenMessageHead struct {
	Model string     `json:"model"`
	Usage *qwenUsage `json:"usage"`
}

// qwenLastText is the last non-empty text block of l's message.
func qwenLastText(l *qwenLine) string {
	for i := len(l.Message.Content) - 1; i >= 0; i-- {
		if c := l.Message.Content[i]; c.Type == "text" && c.Text != "" {
			return string(c.Text)
		}
	}
	return ""
}

// qwenTypes has a case of parseQwen's switch each; lines of other types
// are skipped undecoded.
var qwenTypes = newLineTypes("system", "assistant", "result")

// parseQwen reads `qwen --output-format stream-json` output.
//
//   - Final text: result.result; without a result line (the run was cut
//     short), the last text block of the main agent.
//   - Tools: one use per tool_use block (by id), classified by name
//     (qwenTools), sub-agents' included. A failing shell command comes back
//     with is_error false and stderr as content: only a tool use.
//   - Usage: result.usage (the whole run); without a result line, the sum
//     of the assistant messages' usage. Cost when total_cost_usd is given.
//   - Model: the main agent's last assistant message's, else init's.
//   - Failure: a result text starting with "[API Error:", is_error true, or
//     an error_* subtype (error_max_turns, …).
func parseQwen(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	p := &qwenParser{report: report, seen: toolIDs{}}
	forEachJSONLineOf(stdout, qwenTypes, func(line []byte) {
		if env.muted() {
			var l qwenMutedLine
			if decodeJSONLine(line, &l) {
				p.line(&l.qwenFields, func() { p.mutedAssistant(&l, line) })
			}
			return
		}
		var l qwenLine
		if decodeJSONLine(line, &l) {
			p.line(&l.qwenFields, func() { p.assistant(&l) })
		}
	})
	return p.finish(env)
}

// qwenParser is the state of reading one Qwen Code stream.
type qwenParser struct {
	report   func(events.Activity)
	res      events.AgentResult
	seen     toolIDs
	lastText string // the main agent's last text
	lastLine []byte // or the muted line that has it, when lastText is ""
	summed   events.Usage
	result   *qwenFields
}

// line acts on a line of any type but an assistant's, for which it calls
// assistant.
func (p *qwenParser) line(l *qwenFields, assistant func()) {
	switch l.Type {
	case "system":
		if l.Subtype == "init" && p.res.Model == "" {
			p.res.Model = l.Model
		}
	case "assistant":
		assistant()
	case "result":
		p.result = l
	}
}

func (p *qwenParser) assistant(l *qwenLine) {
	if l.Message == nil {
		return
	}
	main := p.messageHead(&l.qwenFields, &l.Message.qwenMessageHead)
	for _, c := range l.Message.Content {
		switch c.Type {
		case "text":
			if c.Text == "" {
				continue
			}
			p.report(events.Activity{Kind: events.ActivityText, Text: string(c.Text)})
			if main {
				p.lastText, p.lastLine = string(c.Text), p.lastLine[:0]
			}
		case "tool_use":
			if p.seen.first(c.ID) {
				newToolUse(qwenTools, c.Name, c.Input).record(&p.res, p.report)
			}
		}
	}
	p.summed = p.summed.Add(l.Message.Usage.usage())
}

// mutedAssistant is assistant for a line past the activity budget, as
// claudeParser.mutedAssistant is.
func (p *qwenParser) mutedAssistant(l *qwenMutedLine, line []byte) {
	if l.Message == nil {
		return
	}
	main := p.messageHead(&l.qwenFields, &l.Message.qwenMessageHead)
	for _, c := range l.Message.Content {
		switch c.Type {
		case "text":
			if !c.Text {
				continue
			}
			p.report(events.Activity{Kind: events.ActivityText})
			if main {
				p.lastText, p.lastLine = "", append(p.lastLine[:0], line...)
			}
		case "tool_use":
			if p.seen.first(c.ID) {
				newToolUse(qwenTools, c.Name, nil).record(&p.res, p.report)
			}
		}
	}
	p.summed = p.summed.Add(l.Message.Usage.usage())
}

// messageHead takes in the model of an assistant message and reports
// whether it is the main agent's.
func (p *qwenParser) messageHead(l *qwenFields, m *qwenMessageHead) bool {
	main := l.ParentToolUseID == nil || *l.ParentToolUseID == ""
	if main && m.Model != "" {
		p.res.Model = m.Model
	}
	return main
}

// finish settles the result once the stream has ended.
func (p *qwenParser) finish(env parseEnv) events.AgentResult {
	res, result := p.res, p.result
	res.FinalText, res.Usage = p.finalText(), p.summed
	if result != nil {
		if result.Usage != nil {
			res.Usage = result.Usage.usage()
		}
		res.CostUSD = result.TotalCostUSD
	}
	if res.Usage != (events.Usage{}) || res.CostUSD != 0 {
		p.report(events.Activity{Kind: events.ActivityUsage, Usage: res.Usage, CostUSD: res.CostUSD})
	}

	var failure *cliFailure
	final := strings.TrimSpace(res.FinalText)
	switch {
	case strings.HasPrefix(final, "[API Error:"):
		failure = newFailure(strings.TrimSuffix(strings.TrimPrefix(final, "["), "]"), 0, env.now())
	case result != nil && (result.IsError || strings.HasPrefix(result.Subtype, "error")):
		msg := final
		if msg == "" {
			msg = "the run ended with " + result.Subtype
		}
		failure = newFailure(msg, 0, env.now())
	}
	if failure != nil {
		failure.apply(&res, "qwen", qwenAuthHint)
		failure.report(p.report)
	}
	return res
}

// finalText is the result's text, or the main agent's last text when
// there is no result line or its result is not a string.
func (p *qwenParser) finalText() string {
	if p.result != nil {
		var text string
		if json.Unmarshal(p.result.Result, &text) == nil {
			return text
		}
	}
	if p.lastText == "" && len(p.lastLine) > 0 {
		var l qwenLine
		if decodeJSONLine(p.lastLine, &l) {
			return qwenLastText(&l)
		}
	}
	return p.lastText
}
