package backends

// Claude Code, run as
//
//	claude -p [--disallowedTools TOOL…] --output-format stream-json --verbose --dangerously-skip-permissions [--model M] [args…]
//
// with the prompt on stdin (or after -p with PromptMode "arg", while it fits
// in an argument).
//
// What its stdout looks like, from the recorded runs in testdata/claude
// (Claude Code 2.1.197) and, where nothing was recorded, from public
// reports:
//
//   - assistant lines: {"type":"assistant","message":{"id",…,"content":
//     [text|tool_use|thinking],"usage"},"parent_tool_use_id",…}. There is one
//     line per content block; consecutive lines share message.id and repeat
//     its usage. A failed API call becomes a synthetic assistant message
//     whose top-level "error" names the kind: rate_limit,
//     authentication_failed, billing_error, invalid_request, server_error or
//     unknown ("unknown" was seen for an HTTP 400; the set is the Claude
//     Agent SDK's SDKAssistantMessageError).
//   - the last line, {"type":"result","subtype",…,"is_error",
//     "api_error_status","result","total_cost_usd","usage"}. An API error
//     still says subtype "success", with is_error true (seen). Other
//     subtypes: error_max_turns, error_during_execution,
//     error_max_budget_usd, error_max_structured_output_retries.
//   - rate_limit_event (Claude Code 2.1.45 and later; not recorded here):
//     {"type":"rate_limit_event","rate_limit_info":{"status":"allowed"|
//     "allowed_warning"|"rejected","resetsAt":<Unix seconds>,
//     "rateLimitType":"five_hour",…},…}. "allowed" is informational and
//     frequent; "rejected" means the account is over its limit, and the
//     run then ends with is_error and text like "You've hit your limit ·
//     resets 2pm (…)". Sources: anthropics/claude-code#49640,
//     paperclipai/paperclip#5776 (a rejected event quoted whole),
//     desplega-ai/agent-swarm#508 (resetsAt "verified empirically" to be
//     seconds), meawoppl/rust-code-agent-sdks#99 (resetsAt may be
//     missing). A flat top-level status/resetsAt is accepted too, in case a
//     version moves them.
//   - Claude Code 1.0.x ended a usage-limited run with the text "Claude AI
//     usage limit reached|<Unix seconds>" (anthropics/claude-code#6119).
//   - Not logged in: "Invalid API key · Please run /login" as the result
//     text or on stderr.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

func init() {
	register(&cliSpec{
		name:        "claude",
		binary:      "claude",
		install:     "install it with: npm install -g @anthropic-ai/claude-code",
		args:        claudeArgs,
		denyTools:   "--disallowedTools",
		stdin:       stdinAlways,
		env:         claudeEnv,
		parse:       parseClaude,
		reportsCost: true,
		namesModel:  true,
		verdict:     claudeVerdict,
	})
}

// claudeArgs builds `claude -p [PROMPT] [--disallowedTools TOOL…]
// --output-format stream-json --verbose --dangerously-skip-permissions
// [--model M] [args…]`: -p reads the prompt from stdin when no argument
// follows it. --disallowedTools holds even with
// --dangerously-skip-permissions: a denied tool is not offered to the
// model at all.
func claudeArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"-p"}
	if !onStdin {
		args = append(args, prompt)
	}
	args = append(args, denyArgs("--disallowedTools", o.DisallowedTools)...)
	args = append(args, "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	return append(args, o.Args...)
}

// claudeEnv sets IS_SANDBOX=1 when ralph runs as root, because Claude Code
// refuses --dangerously-skip-permissions as root otherwise.
func claudeEnv(Options) []string {
	if os.Geteuid() == 0 {
		return []string{"IS_SANDBOX=1"}
	}
	return nil
}

// claudeToolKinds classifies Claude Code's tools; the rest (Task, WebFetch,
// MCP tools, …) are ToolOther.
var claudeToolKinds = map[string]events.ToolKind{
	"Read":         events.ToolRead,
	"Glob":         events.ToolRead,
	"Grep":         events.ToolRead,
	"LS":           events.ToolRead,
	"NotebookRead": events.ToolRead,
	"Write":        events.ToolWrite,
	"Edit":         events.ToolWrite,
	"MultiEdit":    events.ToolWrite,
	"NotebookEdit": events.ToolWrite,
	"Bash":         events.ToolShell,
}

// Text that marks an error as a rate or usage limit, or as missing
// credentials. Only error text is matched (a result with is_error, or stderr
// of a failed exit), never ordinary assistant text, which may well discuss
// rate limits. Bare status numbers are left out: a stack trace's
// "cli.js:401:12" must not read as HTTP 401.
var (
	claudeRateLimitText = lazyRegexp(`(?i)rate[ _-]?limit|usage limit|hit your limit|too many requests|out of extra usage|api error: 429`)
	// claudeOverloadedText is Anthropic's 529 overloaded_error, which
	// Claude Code has already retried by the time it reports it.
	claudeOverloadedText = lazyRegexp(`(?i)overloaded_error|\boverloaded\b|api error: 529`)
	claudeAuthText       = lazyRegexp(`(?i)invalid api key|/login|authentication_error|authentication_failed|oauth token (has )?expired|not logged in|invalid x-api-key|api error: 401|credit balance is too low`)
	claudeLegacyLimit    = lazyRegexp(`usage limit reached\|(\d{9,13})`)
)

// claudeLine is any stream-json line; each type uses some of the fields.
type claudeLine struct {
	claudeFields
	Message *claudeMessage `json:"message"`
}

// claudeMutedLine is a line read past the activity budget, when text and
// tool reports are only counted: its message's text is not built, nor its
// tool inputs decoded, which is most of what an assistant line costs.
type claudeMutedLine struct {
	claudeFields
	Message *claudeMutedMessage `json:"message"`
}

// claudeFields are the fields of a line besides its message.
type claudeFields struct {
	Type            string `json:"type"`
	Subtype         string `json:"subtype"`
	ParentToolUseID string `json:"parent_tool_use_id"` // null at top level
	Error           string `json:"error"`              // assistant: the API error kind
	Model           string `json:"model"`              // system init: the model configured

	// result
	IsError        bool        `json:"is_error"`
	Result         longString  `json:"result"`
	APIErrorStatus int         `json:"api_error_status"`
	TotalCostUSD   float64     `json:"total_cost_usd"`
	Usage          claudeUsage `json:"usage"`
	Errors         []string    `json:"errors"`

	// rate_limit_event
	RateLimitInfo *claudeRateLimitInfo `json:"rate_limit_info"`
	Status        string               `json:"status"`
	ResetsAt      float64              `json:"resetsAt"`
}

type claudeMessage struct {
	claudeMessageHead
	Content []claudeBlock `json:"content"`
}

type claudeMutedMessage struct {
	claudeMessageHead
	Content []claudeMutedBlock `json:"content"`
}

// claudeMessageHead is what a message says besides its content.
type claudeMessageHead struct {
	ID    string      `json:"id"`
	Model string      `json:"model"`
	Usage claudeUsage `json:"usage"`
}

// claudeMutedBlock is a content block of a claudeMutedLine.
type claudeMutedBlock struct {
	Type string         `json:"type"`
	Text nonEmptyString `json:"text"`
	Name string         `json:"name"`
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  longString      `json:"text"`
	Name  string          `json:"name"`
	Input claudeToolInput `json:"input"`
}

// claudeToolInput holds the input fields that say what a tool touched.
type claudeToolInput struct {
	FilePath     string     `json:"file_path"`
	NotebookPath string     `json:"notebook_path"`
	Path         string     `json:"path"`
	Pattern      string     `json:"pattern"`
	Command      longString `json:"command"`
}

func (in claudeToolInput) target() string {
	for _, s := range []string{in.FilePath, in.NotebookPath, in.Path, in.Pattern} {
		if s != "" {
			return s
		}
	}
	return ""
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

func (u claudeUsage) usage() events.Usage {
	return events.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

type claudeRateLimitInfo struct {
	Status   string  `json:"status"`
	ResetsAt float64 `json:"resetsAt"`
}

// claudeParser is the state of reading one Claude Code stream.
type claudeParser struct {
	report      func(events.Activity)
	res         events.AgentResult
	sawResult   bool
	lastText    string                  // the last top-level assistant text
	lastLine    []byte                  // or the muted line that has it, when lastText is ""
	msgUsage    map[string]events.Usage // per message id, for a stream without a result line
	lastError   string                  // "error" of the last assistant message that had one
	rateLimited bool                    // a rate_limit_event said rejected
	limitSent   bool                    // an ActivityRateLimit was reported
	resetAt     time.Time
	initModel   string // the init line's model, for a stream with no assistant message
}

// claudeTypes has a case of claudeParser.line's switch each; lines of other types
// are skipped undecoded.
var claudeTypes = newLineTypes("system", "assistant", "result", "rate_limit_event")

// parseClaude reads Claude Code's stream-json output; see the file comment.
// Its reset times are absolute (Unix seconds), so it has no use for now.
// Past the activity budget, lines are read as claudeMutedLine.
func parseClaude(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	p := &claudeParser{report: report, msgUsage: map[string]events.Usage{}}
	forEachJSONLineOf(stdout, claudeTypes, func(line []byte) {
		if env.muted() {
			var l claudeMutedLine
			if decodeJSONLine(line, &l) {
				p.line(&l.claudeFields, func() { p.mutedAssistant(&l, line) })
			}
			return
		}
		var l claudeLine
		if decodeJSONLine(line, &l) {
			p.line(&l.claudeFields, func() { p.assistant(&l) })
		}
	})
	return p.finish()
}

// line acts on a line of any type but an assistant's, for which it calls
// assistant.
func (p *claudeParser) line(l *claudeFields, assistant func()) {
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			p.initModel = l.Model
		}
	case "assistant":
		assistant()
	case "result":
		p.result(l)
	case "rate_limit_event":
		p.rateLimit(l)
	}
}

func (p *claudeParser) assistant(l *claudeLine) {
	m := l.Message
	var head *claudeMessageHead
	if m != nil {
		head = &m.claudeMessageHead
	}
	if !p.messageHead(&l.claudeFields, head) {
		return
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text == "" {
				continue
			}
			p.report(events.Activity{Kind: events.ActivityText, Text: string(b.Text)})
			// A sub-agent's text is not the answer to ralph's prompt.
			if l.ParentToolUseID == "" {
				p.lastText, p.lastLine = string(b.Text), p.lastLine[:0]
			}
		case "tool_use":
			p.tool(b)
		}
	}
}

// mutedAssistant is assistant for a line past the activity budget: its
// reports are only counted, so they go without their text, path or
// command. The line itself is kept when it holds the last text, which
// finish decodes again should no result line give the final text.
func (p *claudeParser) mutedAssistant(l *claudeMutedLine, line []byte) {
	m := l.Message
	var head *claudeMessageHead
	if m != nil {
		head = &m.claudeMessageHead
	}
	if !p.messageHead(&l.claudeFields, head) {
		return
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if !b.Text {
				continue
			}
			p.report(events.Activity{Kind: events.ActivityText})
			if l.ParentToolUseID == "" {
				p.lastText, p.lastLine = "", append(p.lastLine[:0], line...)
			}
		case "tool_use":
			p.tool(claudeBlock{Name: b.Name})
		}
	}
}

// messageHead acts on what an assistant line says besides its message's
// content, and reports whether it has a message (m, nil for none).
func (p *claudeParser) messageHead(l *claudeFields, m *claudeMessageHead) bool {
	if l.Error != "" {
		p.lastError = l.Error
	}
	if m == nil {
		return false
	}
	if m.ID != "" {
		p.msgUsage[m.ID] = m.Usage.usage()
	}
	// A sub-agent may run on a cheaper model; "<synthetic>" marks a
	// message Claude Code wrote itself (an API error), no model's.
	if l.ParentToolUseID == "" && m.Model != "" && m.Model != "<synthetic>" {
		p.res.Model = m.Model
	}
	return true
}

func (p *claudeParser) tool(b claudeBlock) {
	kind, ok := claudeToolKinds[b.Name]
	if !ok {
		kind = events.ToolOther
	}
	a := events.Activity{Kind: events.ActivityTool, Tool: kind, ToolName: b.Name}
	if kind == events.ToolShell {
		a.Command = string(b.Input.Command)
	} else {
		a.Path = b.Input.target()
	}
	p.res.Tools.Count(kind)
	p.report(a)
}

func (p *claudeParser) result(l *claudeFields) {
	p.sawResult = true
	p.res.FinalText = string(l.Result)
	p.res.Usage = l.Usage.usage()
	p.res.CostUSD = l.TotalCostUSD
	p.report(events.Activity{Kind: events.ActivityUsage, Usage: p.res.Usage, CostUSD: p.res.CostUSD})
	if l.IsError || strings.HasPrefix(l.Subtype, "error") {
		p.fail(claudeResultMessage(l), l.APIErrorStatus)
	}
}

// claudeResultMessage says in a line why a result is an error.
func claudeResultMessage(l *claudeFields) string {
	switch {
	case strings.TrimSpace(string(l.Result)) != "":
		return lastLine(string(l.Result))
	case len(l.Errors) > 0:
		return lastLine(strings.Join(l.Errors, "; "))
	case l.APIErrorStatus != 0:
		return fmt.Sprintf("API error %d", l.APIErrorStatus)
	default:
		return "claude ended with " + l.Subtype
	}
}

func (p *claudeParser) rateLimit(l *claudeFields) {
	status, resets := l.Status, l.ResetsAt
	if info := l.RateLimitInfo; info != nil {
		status, resets = info.Status, info.ResetsAt
	}
	if status != "rejected" {
		return
	}
	p.rateLimited = true
	if t := unixTime(resets); !t.IsZero() {
		p.resetAt = t
	}
	p.limitSent = true
	p.report(events.Activity{Kind: events.ActivityRateLimit, Text: "rate limit rejected", ResetAt: p.resetAt})
}

// fail records the output's own verdict: a rate limit, missing
// credentials, or another agent error. msg is the agent's own words.
func (p *claudeParser) fail(msg string, status int) {
	f := &cliFailure{kind: claudeFailureKind(p.lastError, status, msg, p.rateLimited), message: msg}
	if f.kind == events.FailureRateLimit {
		if p.resetAt.IsZero() {
			p.resetAt = claudeLegacyReset(msg)
		}
		f.resetAt = p.resetAt
	}
	f.apply(&p.res, "claude", claudeAuthHint)
	switch {
	case f.kind != events.FailureRateLimit:
		f.report(p.report)
	case !p.limitSent: // else a rejected rate_limit_event said so already
		p.limitSent = true
		f.report(p.report)
	}
}

// claudeAuthHint is how to fix a credentials problem.
const claudeAuthHint = "run `claude /login`, or set ANTHROPIC_API_KEY"

// claudeFailureKind classifies an error the output reports. Billing errors
// count as auth failures: like missing credentials, retrying cannot help
// until a human acts. An overloaded service, which Claude Code has retried
// already, is the provider's failure: another backend may do the work.
func claudeFailureKind(assistantErr string, status int, msg string, rejected bool) events.FailureKind {
	switch {
	case rejected, assistantErr == "rate_limit", status == 429, claudeRateLimitText().MatchString(msg):
		return events.FailureRateLimit
	case assistantErr == "authentication_failed", assistantErr == "billing_error", status == 401,
		claudeAuthText().MatchString(msg):
		return events.FailureAuth
	case assistantErr == "overloaded", status == 529, claudeOverloadedText().MatchString(msg):
		return events.FailureProvider
	default:
		return events.FailureAgent
	}
}

// claudeLegacyReset reads the reset time out of Claude Code 1.0.x's "Claude
// AI usage limit reached|<Unix seconds>".
func claudeLegacyReset(msg string) time.Time {
	m := claudeLegacyLimit().FindStringSubmatch(msg)
	if m == nil {
		return time.Time{}
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return time.Time{}
	}
	return unixTime(v)
}

// finish settles a stream that ended without a result line (the agent was
// killed, or crashed): the final text is the last assistant text, usage the
// sum over messages (their output counts are snapshots from the start of
// each message, so this undercounts), and an API error or rejected rate
// limit seen on the way is the verdict.
func (p *claudeParser) finish() events.AgentResult {
	if p.res.Model == "" {
		p.res.Model = p.initModel
	}
	if p.sawResult {
		return p.res
	}
	if p.lastText == "" && len(p.lastLine) > 0 {
		var l claudeLine
		if decodeJSONLine(p.lastLine, &l) {
			p.lastText = claudeLastText(l.Message.Content)
		}
	}
	p.res.FinalText = p.lastText
	for _, u := range p.msgUsage {
		p.res.Usage = p.res.Usage.Add(u)
	}
	if p.res.Usage != (events.Usage{}) {
		p.report(events.Activity{Kind: events.ActivityUsage, Usage: p.res.Usage})
	}
	switch {
	case p.rateLimited:
		p.fail("claude was refused for a rate or usage limit", 0)
	case p.lastError != "":
		msg := lastLine(p.lastText)
		if msg == "" {
			msg = "API error: " + p.lastError
		}
		p.fail(msg, 0)
	}
	return p.res
}

// claudeLastText is the last non-empty text of content.
func claudeLastText(content []claudeBlock) string {
	for i := len(content) - 1; i >= 0; i-- {
		if b := content[i]; b.Type == "text" && b.Text != "" {
			return string(b.Text)
		}
	}
	return ""
}

// claudeVerdict settles a run whose output had no verdict of its own: a
// non-zero exit is an auth failure or a rate limit when stderr says so, and
// an exit failure otherwise.
func claudeVerdict(res *events.AgentResult, exitCode int, stderrTail string) {
	if res.Failure != events.FailureNone || exitCode == 0 {
		return
	}
	f := &cliFailure{message: withStderr(fmt.Sprintf("exited with status %d", exitCode), stderrTail)}
	switch {
	case claudeAuthText().MatchString(stderrTail):
		f.kind = events.FailureAuth
		f.apply(res, "claude", claudeAuthHint)
	case claudeRateLimitText().MatchString(stderrTail):
		f.kind, f.resetAt = events.FailureRateLimit, claudeLegacyReset(stderrTail)
		f.apply(res, "claude", claudeAuthHint)
	default:
		exitFailure(res, "claude", exitCode, stderrTail)
	}
}
