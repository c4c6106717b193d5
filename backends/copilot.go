package backends

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// GitHub Copilot CLI: `copilot -p PROMPT --output-format json` prints
// session events as JSON lines {type, data, id, timestamp, parentId,
// ephemeral, agentId}: assistant.message {content, toolRequests},
// tool.execution_start {toolCallId, toolName, arguments},
// tool.execution_complete, assistant.usage, session.error {errorType,
// errorCode, message, statusCode}, and a final result {exitCode, usage}; see
// docs/agent-clis.md#copilot and the session-events schema of github/copilot-sdk
// (nodejs/src/generated/session-events.ts).

const copilotAuthHint = "run `copilot` and /login, or set COPILOT_GITHUB_TOKEN (or GH_TOKEN)"

func init() {
	register(&cliSpec{
		name:    "copilot",
		binary:  "copilot",
		install: "install it with: npm install -g @github/copilot",
		args:    copilotArgs,
		// Its permission rules (shell(git push), write, an MCP server's
		// tool): a denial wins over --allow-all-tools (`copilot help
		// permissions`, Copilot CLI 1.0.102).
		denyTools: "--deny-tool",
		stdin:     stdinAlways,
		// No self-update in the middle of a loop (the flag says the same).
		env:        func(Options) []string { return []string{"COPILOT_AUTO_UPDATE=false"} },
		parse:      parseCopilot,
		namesModel: true,
		// Token counts reach stdout in no event: --output-format json
		// leaves out assistant.usage and session.shutdown (see
		// readCopilotUsage), so they are read from this file.
		usageFile: &usageFileSpec{flag: "--usage-output-file", read: readCopilotUsage},
		verdict: func(res *events.AgentResult, exitCode int, stderrTail string) {
			exitVerdict(res, "copilot", exitCode, stderrTail, copilotAuthHint)
		},
	})
}

// copilotArgs builds `copilot [--deny-tool RULE…] --output-format json --allow-all-tools
// --disable-client-telemetry --no-auto-update [--model M] [args…]`:
// without -p, copilot takes a piped stdin as the prompt and runs in the
// same non-interactive mode ("No prompt provided. Run in an interactive
// terminal or provide a prompt with -p or via standard in."; with -p it
// ignores stdin). As an argument the prompt is the value of `-p PROMPT`,
// first, so extra arguments cannot be taken for it.
func copilotArgs(o Options, prompt string, onStdin bool) []string {
	var args []string
	if !onStdin {
		args = append(args, "-p", prompt)
	}
	args = append(args, denyArgs("--deny-tool", o.DisallowedTools)...)
	args = append(args, "--output-format", "json", "--allow-all-tools", "--disable-client-telemetry", "--no-auto-update")
	args = append(args, modelArgs("--model", o.Model)...)
	return append(args, o.Args...)
}

var copilotTools = map[string]events.ToolKind{
	"create": events.ToolWrite, "edit": events.ToolWrite, "apply_patch": events.ToolWrite,
	"view": events.ToolRead, "grep": events.ToolRead, "glob": events.ToolRead,
	"bash": events.ToolShell, "read_bash": events.ToolShell, "stop_bash": events.ToolShell,
}

type copilotLine struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"` // set on a sub-agent's events
	Data    struct {
		Model            string          `json:"model"` // assistant.message
		Content          longString      `json:"content"`
		ParentToolCallID string          `json:"parentToolCallId"`
		ToolCallID       string          `json:"toolCallId"`
		ToolName         string          `json:"toolName"`
		RawArguments     json.RawMessage `json:"arguments"`
		ErrorType        string          `json:"errorType"`
		Message          string          `json:"message"`
		StatusCode       int             `json:"statusCode"`
		InputTokens      int64           `json:"inputTokens"`
		OutputTokens     int64           `json:"outputTokens"`
		CacheReadTokens  int64           `json:"cacheReadTokens"`
		CacheWriteTokens int64           `json:"cacheWriteTokens"`
	} `json:"data"`
	ExitCode *int `json:"exitCode"` // result
	Usage    struct {
		// PremiumRequests is what the session was billed, in premium
		// requests: a fraction for a model with a multiplier below 1, 0
		// with a provider of the user's own (BYOK).
		PremiumRequests float64 `json:"premiumRequests"`
	} `json:"usage"` // result
}

// copilotTypes has a case of parseCopilot's switch each; lines of other types
// are skipped undecoded.
var copilotTypes = newLineTypes("assistant.message", "tool.execution_start", "assistant.usage", "session.error", "result")

// parseCopilot reads `copilot --output-format json` output.
//
//   - Final text: the content of the main agent's last assistant.message
//     (a sub-agent's messages carry agentId or parentToolCallId).
//   - Tools: one use per tool.execution_start (by toolCallId), classified
//     by toolName (copilotTools). A shell command that exits 1 completes
//     with success true and shellExecution.exitCode 1: only a tool use.
//   - Usage: summed over assistant.usage events when copilot prints them
//     (their "cost" is a premium-request multiplier, not dollars, and is not
//     used). Copilot CLI 1.0.102 prints none, whatever the provider sends:
//     see readCopilotUsage for where the tokens come from instead.
//   - Model: the main agent's last assistant.message's. Requests: the
//     result's usage.premiumRequests, rounded up to whole requests.
//   - Failure: session.error, classified by errorType ("rate_limit",
//     "quota", "authentication", "authorization", …), statusCode and
//     message; or result.exitCode other than 0. A result with exitCode 0
//     means copilot recovered from an earlier session.error.
func parseCopilot(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	var res events.AgentResult
	seen := toolIDs{}
	var pending *cliFailure
	forEachJSONObject(stdout, copilotTypes, func(l *copilotLine) {
		switch l.Type {
		case "assistant.message":
			if l.AgentID != "" || l.Data.ParentToolCallID != "" {
				return
			}
			res.FinalText = string(l.Data.Content)
			if l.Data.Model != "" {
				res.Model = l.Data.Model
			}
			if l.Data.Content != "" {
				report(events.Activity{Kind: events.ActivityText, Text: res.FinalText})
			}
		case "tool.execution_start":
			if !seen.first(l.Data.ToolCallID) {
				return
			}
			var args toolArgs
			_ = decodeJSONLine(l.Data.RawArguments, &args) // apply_patch's arguments are a plain string
			newToolUse(copilotTools, l.Data.ToolName, args).record(&res, report)
		case "assistant.usage":
			u := events.Usage{
				InputTokens:      l.Data.InputTokens,
				OutputTokens:     l.Data.OutputTokens,
				CacheReadTokens:  l.Data.CacheReadTokens,
				CacheWriteTokens: l.Data.CacheWriteTokens,
			}
			if u != (events.Usage{}) {
				res.Usage = res.Usage.Add(u)
				report(events.Activity{Kind: events.ActivityUsage, Usage: u})
			}
		case "session.error":
			pending = copilotFailure(l.Data.ErrorType, l.Data.Message, l.Data.StatusCode, env.now())
		case "result":
			res.Requests = int(math.Ceil(l.Usage.PremiumRequests))
			switch {
			case l.ExitCode == nil:
			case *l.ExitCode == 0:
				pending = nil
			case pending == nil:
				pending = &cliFailure{kind: events.FailureAgent, message: fmt.Sprintf("the session ended with exit code %d", *l.ExitCode)}
			}
		}
	})
	if pending != nil {
		pending.apply(&res, "copilot", copilotAuthHint)
		pending.report(report)
	}
	return res
}

// copilotFailure classifies a session.error.
func copilotFailure(errorType, message string, status int, now time.Time) *cliFailure {
	msg := message
	if msg == "" {
		msg = errorType
	}
	f := newFailure(msg, status, now)
	switch errorType {
	case "rate_limit", "quota":
		f.kind = events.FailureRateLimit
		f.resetAt = resetAtIn(msg, now)
	case "authentication", "authorization":
		f.kind = events.FailureAuth
	}
	return f
}

// copilotUsageFile is the part of the file `copilot --usage-output-file F`
// writes as it exits that holds tokens: per model, the session's totals.
//
// Why a file: Copilot CLI 1.0.102 does track tokens (the server's usage
// chunk, e.g. Chat Completions' stream_options.include_usage, becomes
// assistant.usage and session.usage_record events, and ~/.copilot/
// session-state/<id>/events.jsonl holds them), but the JSON-lines writer of
// -p --output-format json drops assistant.usage, session.shutdown and
// session.usage_info by name before printing (its bundled cli-main.js keeps
// a set of event types it never prints), and the final result line carries
// only premiumRequests, durations and code changes. --usage-output-file
// ("Write final usage statistics as JSON to the specified file", in
// `copilot --help`) is the one documented place the counts come out. Seen:
// {"modelMetrics":{"fake-model":{"requests":{"count":2,"cost":0},
// "usage":{"inputTokens":24052,"outputTokens":18,"cacheReadTokens":0,
// "cacheWriteTokens":0}}}, …}; recorded in testdata/copilot/usage-output.json.
type copilotUsageFile struct {
	ModelMetrics map[string]struct {
		Usage struct {
			InputTokens      int64 `json:"inputTokens"`
			OutputTokens     int64 `json:"outputTokens"`
			CacheReadTokens  int64 `json:"cacheReadTokens"`
			CacheWriteTokens int64 `json:"cacheWriteTokens"`
		} `json:"usage"`
	} `json:"modelMetrics"`
}

// readCopilotUsage sums the usage of every model in a usage-output file.
func readCopilotUsage(data []byte) (events.Usage, error) {
	var f copilotUsageFile
	if err := json.Unmarshal(data, &f); err != nil {
		return events.Usage{}, err
	}
	var u events.Usage
	for _, m := range f.ModelMetrics {
		u = u.Add(events.Usage{
			InputTokens:      m.Usage.InputTokens,
			OutputTokens:     m.Usage.OutputTokens,
			CacheReadTokens:  m.Usage.CacheReadTokens,
			CacheWriteTokens: m.Usage.CacheWriteTokens,
		})
	}
	return u, nil
}
