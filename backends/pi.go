package backends

import (
	"io"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// pi: `pi -p --mode json` prints its agent events as JSON lines: session,
// agent_start, turn_start, message_start/update/end (user, assistant and
// toolResult messages), tool_execution_start/update/end, turn_end,
// agent_end, auto_retry_start/end; see docs/agent-clis.md#pi. pi exits 0 even when
// the model API fails: the failure is only in the output.

const piAuthHint = "set the provider's API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), or run `pi` and /login"

func init() {
	register(&cliSpec{
		name:    "pi",
		binary:  "pi",
		install: "install it with: npm install -g @mariozechner/pi-coding-agent",
		args:    piArgs,
		stdin:   stdinAlways,
		// Skip the start-up check for a newer version; nothing else changes.
		env:        func(Options) []string { return []string{"PI_SKIP_VERSION_CHECK=1"} },
		parse:      parsePi,
		namesModel: true,
		verdict: func(res *events.AgentResult, exitCode int, stderrTail string) {
			exitVerdict(res, "pi", exitCode, stderrTail, piAuthHint)
		},
	})
}

// piArgs builds `pi -p --mode json --no-session [--model M] [args…]`: -p
// is a switch (print mode), which "also reads piped stdin and merges it into
// the initial prompt" (pi's README), and with --mode json since pi 0.65.1.
// As an argument the prompt is the last positional one, after the user's
// arguments.
func piArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"-p", "--mode", "json", "--no-session"}
	args = append(args, modelArgs("--model", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return args
	}
	return append(args, prompt)
}

var piTools = map[string]events.ToolKind{
	"write": events.ToolWrite, "edit": events.ToolWrite,
	"read": events.ToolRead, "grep": events.ToolRead, "find": events.ToolRead, "ls": events.ToolRead,
	"bash": events.ToolShell,
}

type piMessage struct {
	Role    string `json:"role"`
	Model   string `json:"model"`
	Content []struct {
		Type string     `json:"type"`
		Text longString `json:"text"`
	} `json:"content"`
	Usage *struct {
		Input      int64 `json:"input"`
		Output     int64 `json:"output"`
		CacheRead  int64 `json:"cacheRead"`
		CacheWrite int64 `json:"cacheWrite"`
		Cost       struct {
			Total float64 `json:"total"`
		} `json:"cost"`
	} `json:"usage"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
}

type piLine struct {
	Type         string     `json:"type"`
	Message      *piMessage `json:"message"`
	ToolCallID   string     `json:"toolCallId"`
	ToolName     string     `json:"toolName"`
	Args         toolArgs   `json:"args"`
	ErrorMessage string     `json:"errorMessage"` // auto_retry_start
	Success      *bool      `json:"success"`      // auto_retry_end
	FinalError   string     `json:"finalError"`   // auto_retry_end
}

// piTypes has a case of parsePi's switch each; lines of other types
// are skipped undecoded.
var piTypes = newLineTypes("message_end", "tool_execution_start", "auto_retry_start", "auto_retry_end")

// parsePi reads `pi --mode json` output.
//
//   - Final text: the text of the last assistant message_end (empty when
//     that message has only tool calls or failed).
//   - Tools: one use per tool_execution_start (by toolCallId), classified
//     by toolName (piTools). A failing command ends with isError true: only
//     a tool use.
//   - Usage and cost: summed over assistant message_end (usage.input
//     excludes cache reads; usage.cost.total is from the model's prices).
//   - Model: the last assistant message's.
//   - Failure: the last assistant message has stopReason "error" (its
//     errorMessage says why, e.g. "400 …" or "You have hit your ChatGPT usage
//     limit … Try again in ~91 min.") or "aborted", or an auto-retry ends
//     without success. A later successful message (pi retries on its own)
//     clears an earlier error.
func parsePi(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	var res events.AgentResult
	seen := toolIDs{}
	var pending *cliFailure
	forEachJSONObject(stdout, piTypes, func(l *piLine) {
		switch l.Type {
		case "message_end":
			if l.Message != nil && l.Message.Role == "assistant" {
				pending = piAssistantEnd(&res, report, l.Message, env.now)
			}
		case "tool_execution_start":
			if !seen.first(l.ToolCallID) {
				return
			}
			newToolUse(piTools, l.ToolName, l.Args).record(&res, report)
		case "auto_retry_start":
			// pi retries by itself; say so when the reason is a limit.
			if f := newFailure(l.ErrorMessage, 0, env.now()); f.kind == events.FailureRateLimit {
				f.report(report)
			}
		case "auto_retry_end":
			if l.Success != nil && !*l.Success {
				msg := l.FinalError
				if msg == "" && pending != nil {
					msg = pending.message
				}
				pending = newFailure(msg, 0, env.now())
			}
		}
	})
	if pending != nil {
		pending.apply(&res, "pi", piAuthHint)
		pending.report(report)
	}
	return res
}

// piAssistantEnd takes in one finished assistant message and returns the
// failure it shows, if any.
func piAssistantEnd(res *events.AgentResult, report func(events.Activity), m *piMessage, now func() time.Time) *cliFailure {
	var texts []string
	for _, c := range m.Content {
		if c.Type == "text" {
			texts = append(texts, string(c.Text))
		}
	}
	res.FinalText = strings.Join(texts, "") // one text, the usual, is not copied
	if m.Model != "" {
		res.Model = m.Model
	}
	if res.FinalText != "" {
		report(events.Activity{Kind: events.ActivityText, Text: res.FinalText})
	}
	if u := m.Usage; u != nil {
		usage := events.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
		res.Usage = res.Usage.Add(usage)
		res.CostUSD += u.Cost.Total
		if usage != (events.Usage{}) || u.Cost.Total != 0 {
			report(events.Activity{Kind: events.ActivityUsage, Usage: usage, CostUSD: u.Cost.Total})
		}
	}
	switch m.StopReason {
	case "error":
		msg := m.ErrorMessage
		if msg == "" {
			msg = "the model request failed"
		}
		return newFailure(msg, 0, now())
	case "aborted":
		return &cliFailure{kind: events.FailureAgent, message: "the request was aborted"}
	}
	return nil
}
