package backends

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// OpenCode: `opencode run --format json` prints JSON lines {type,
// timestamp, sessionID, part}: step_start, text (a whole text part),
// tool_use (once the tool has finished), step_finish {part.tokens,
// part.cost}, reasoning, and error {error:{name, data}}; see
// docs/agent-clis.md#opencode.

const opencodeAuthHint = "run `opencode auth login`, or set the provider's API key"

func init() {
	register(&cliSpec{
		name:    "opencode",
		binary:  "opencode",
		install: "install it with: npm install -g opencode-ai",
		args:    opencodeArgs,
		stdin:   stdinAlways,
		// No self-update in the middle of a loop.
		env: func(Options) []string { return []string{"OPENCODE_DISABLE_AUTOUPDATE=1"} },
		// Its permission config: a tool set to "deny" is refused even
		// with --auto, which approves only what is not denied (OpenCode
		// 1.18 merges OPENCODE_PERMISSION over its config files).
		denyTools: "OPENCODE_PERMISSION",
		denyEnv:   opencodeDenyEnv,
		parse:     parseOpenCode,
		verdict: func(res *events.AgentResult, exitCode int, stderrTail string) {
			exitVerdict(res, "opencode", exitCode, stderrTail, opencodeAuthHint)
		},
	})
}

// opencodeArgs builds `opencode run --format json --auto [-m
// PROVIDER/MODEL] [args…]`: `opencode run` reads a piped stdin to its end
// and appends it to the message, which is then all of it. As an argument
// the prompt is the last positional one, after the user's arguments, so
// they are parsed as flags.
func opencodeArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"run", "--format", "json", "--auto"}
	args = append(args, modelArgs("-m", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return args
	}
	return append(args, prompt)
}

// opencodeDenyEnv is OPENCODE_PERMISSION with each disallowed tool set to
// "deny", over what cli.env set it to (when that is a JSON object), so
// the user's other permissions stay.
func opencodeDenyEnv(o Options) []string {
	perm := map[string]any{}
	if v, ok := o.Env["OPENCODE_PERMISSION"]; ok {
		_ = json.Unmarshal([]byte(v), &perm) // not an object: ours alone
	}
	if perm == nil {
		perm = map[string]any{}
	}
	for _, t := range o.DisallowedTools {
		perm[t] = "deny"
	}
	b, _ := json.Marshal(perm) // strings and what JSON decoded: cannot fail
	return []string{"OPENCODE_PERMISSION=" + string(b)}
}

var opencodeTools = map[string]events.ToolKind{
	"write": events.ToolWrite, "edit": events.ToolWrite, "patch": events.ToolWrite,
	"multiedit": events.ToolWrite, "apply_patch": events.ToolWrite,
	"read": events.ToolRead, "glob": events.ToolRead, "grep": events.ToolRead, "list": events.ToolRead,
	"bash": events.ToolShell,
}

type opencodeLine struct {
	Type string `json:"type"`
	Part *struct {
		Type   string     `json:"type"`
		Text   longString `json:"text"`
		Tool   string     `json:"tool"`
		CallID string     `json:"callID"`
		State  *struct {
			Input toolArgs `json:"input"`
		} `json:"state"`
		Tokens *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
			Cache  struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message         string            `json:"message"`
			StatusCode      int               `json:"statusCode"`
			ResponseHeaders map[string]string `json:"responseHeaders"`
			ResponseBody    string            `json:"responseBody"`
		} `json:"data"`
	} `json:"error"`
}

// opencodeTypes has a case of parseOpenCode's switch each; lines of other types
// are skipped undecoded.
var opencodeTypes = newLineTypes("text", "tool_use", "step_finish", "error")

// parseOpenCode reads `opencode run --format json` output.
//
//   - Final text: the last non-empty text part.
//   - Tools: one use per tool_use line (by callID), classified by part.tool
//     (opencodeTools). A shell command that exits 1 is reported with status
//     "completed" and metadata.exit 1: only a tool use.
//   - Usage and cost: summed over step_finish (part.tokens.input excludes
//     cache reads and writes, which come separately; part.cost is 0 for a
//     model without prices).
//   - Failure: an error line. ProviderAuthError and HTTP 401/403 are
//     credentials problems; HTTP 429 or rate-limit wording is a rate limit,
//     its reset read from the retry-after headers or the message.
func parseOpenCode(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	var res events.AgentResult
	seen := toolIDs{}
	var failure *cliFailure
	forEachJSONObject(stdout, opencodeTypes, func(l *opencodeLine) {
		switch l.Type {
		case "text":
			if l.Part != nil && strings.TrimSpace(string(l.Part.Text)) != "" {
				res.FinalText = string(l.Part.Text)
				report(events.Activity{Kind: events.ActivityText, Text: res.FinalText})
			}
		case "tool_use":
			if l.Part == nil {
				return
			}
			if !seen.first(l.Part.CallID) {
				return
			}
			var input toolArgs
			if l.Part.State != nil {
				input = l.Part.State.Input
			}
			newToolUse(opencodeTools, l.Part.Tool, input).record(&res, report)
		case "step_finish":
			if l.Part == nil || l.Part.Tokens == nil {
				return
			}
			t := l.Part.Tokens
			u := events.Usage{InputTokens: t.Input, OutputTokens: t.Output, CacheReadTokens: t.Cache.Read, CacheWriteTokens: t.Cache.Write}
			res.Usage = res.Usage.Add(u)
			res.CostUSD += l.Part.Cost
			report(events.Activity{Kind: events.ActivityUsage, Usage: u, CostUSD: l.Part.Cost})
		case "error":
			if l.Error != nil {
				failure = opencodeFailure(l.Error.Name, l.Error.Data.Message, l.Error.Data.StatusCode,
					l.Error.Data.ResponseHeaders, l.Error.Data.ResponseBody, env.now())
			}
		}
	})
	if failure != nil {
		failure.apply(&res, "opencode", opencodeAuthHint)
		failure.report(report)
	}
	return res
}

// opencodeFailure classifies an opencode error line.
func opencodeFailure(name, message string, status int, headers map[string]string, body string, now time.Time) *cliFailure {
	msg := message
	if msg == "" {
		msg = name
	}
	if status != 0 {
		msg = fmt.Sprintf("%s (HTTP %d)", msg, status)
	}
	f := newFailure(msg, status, now)
	if f.kind == events.FailureAgent {
		if k := failureKind(body, 0); k != events.FailureAgent {
			f.kind = k
		}
	}
	if name == "ProviderAuthError" {
		f.kind = events.FailureAuth
	}
	if f.kind == events.FailureRateLimit {
		if t := retryAfter(headers, now); !t.IsZero() {
			f.resetAt = t
		} else if f.resetAt.IsZero() {
			f.resetAt = resetAtIn(body, now)
		}
	}
	return f
}

// retryAfter reads the retry-after-ms and retry-after response headers
// (seconds, or an HTTP date).
func retryAfter(headers map[string]string, now time.Time) time.Time {
	get := func(name string) string {
		for k, v := range headers {
			if strings.EqualFold(k, name) {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if v := get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return now.Add(scaled(ms, time.Millisecond))
		}
	}
	if v := get("retry-after"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return now.Add(scaled(s, time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return t
		}
	}
	return time.Time{}
}
