package backends

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// Gemini CLI: `gemini -p PROMPT --output-format stream-json` prints JSON
// lines init, message {role, content, delta}, tool_use, tool_result, error
// {severity, message} and a final result {status, error, stats}; see
// docs/agent-clis.md#gemini. Its exit codes are listed at geminiVerdict.

const geminiAuthHint = "run `gemini` once to log in, or set GEMINI_API_KEY"

func init() {
	register(&cliSpec{
		name:    "gemini",
		binary:  "gemini",
		install: "install it with: npm install -g @google/gemini-cli",
		args:    geminiArgs,
		stdin:   stdinAlways,
		// Like --skip-trust, this lets gemini run in a folder the user has
		// not trusted; without either it exits 55
		// (docs/agent-clis.md#gemini).
		env: func(Options) []string { return []string{"GEMINI_CLI_TRUST_WORKSPACE=true"} },
		// Its policy engine: a user policy file's deny rule outranks the
		// allow-everything rule of --yolo, which is a default one (Gemini
		// CLI 0.61, bundle/policies/yolo.toml).
		denyTools:  "--policy",
		denyFile:   &denyFileSpec{flag: "--policy", name: "ralph-disallowed-tools.toml", render: geminiPolicy},
		parse:      parseGemini,
		namesModel: true,
		verdict:    geminiVerdict,
	})
}

// geminiArgs builds `gemini --output-format stream-json --yolo
// --skip-trust [-m M] [args…]`: without -p, gemini takes a piped stdin as
// the prompt and runs headless. As an argument the prompt is the value of
// `-p PROMPT`, first, so extra arguments cannot be mistaken for it.
func geminiArgs(o Options, prompt string, onStdin bool) []string {
	var args []string
	if !onStdin {
		args = append(args, "-p", prompt)
	}
	args = append(args, "--output-format", "stream-json", "--yolo", "--skip-trust")
	args = append(args, modelArgs("-m", o.Model)...)
	return append(args, o.Args...)
}

// geminiPolicy is a policy file that denies tools, by the names of the
// Gemini CLI's tools (run_shell_command, web_fetch, …).
func geminiPolicy(tools []string) []byte {
	return []byte("# ralph: cli.disallowed_tools and the hat's\n[[rule]]\ntoolName = " + tomlStrings(tools) +
		"\ndecision = \"deny\"\npriority = 999\ndenyMessage = \"ralph's disallowed_tools denies this tool\"\n")
}

var geminiTools = map[string]events.ToolKind{
	"write_file": events.ToolWrite, "replace": events.ToolWrite, "edit": events.ToolWrite,
	"read_file": events.ToolRead, "read_many_files": events.ToolRead, "glob": events.ToolRead,
	"grep_search": events.ToolRead, "search_file_content": events.ToolRead, "list_directory": events.ToolRead,
	"run_shell_command": events.ToolShell,
}

type geminiLine struct {
	Type       string     `json:"type"`
	Role       string     `json:"role"`
	Content    longString `json:"content"`
	ToolName   string     `json:"tool_name"`
	ToolID     string     `json:"tool_id"`
	Parameters toolArgs   `json:"parameters"`
	Status     string     `json:"status"`
	Severity   string     `json:"severity"`
	Message    string     `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		Cached       int64  `json:"cached"`
		Input        *int64 `json:"input"` // input not served from cache, in newer versions
		// Models has the same figures per model: the model router's
		// side request runs on a small model, the turns on another.
		Models map[string]geminiModelStats `json:"models"`
	} `json:"stats"`
}

// geminiTypes has a case of parseGemini's switch each; lines of other types
// are skipped undecoded.
var geminiTypes = newLineTypes("message", "tool_use", "tool_result", "error", "result")

// parseGemini reads `gemini --output-format stream-json` output.
//
//   - Final text: the assistant message chunks after the last tool_result,
//     joined (assistant text arrives as "delta" chunks).
//   - Text activity: one per run of chunks, when a tool call or the result
//     ends it.
//   - Tools: one use per tool_use line (geminiTools). A shell command that
//     exits non-zero still comes back "success"; either way it is only a
//     tool use.
//   - Usage: result.stats, which covers the whole run including the model
//     router's side request; input_tokens includes cached tokens. No cost.
//   - Model: the one of result.stats.models that used the most tokens
//     (init says only "auto" when the router picks).
//   - Failure: result status "error", read from result.error.message; an
//     error line of severity "error" (such as a quota notice while gemini
//     retries) counts only if no successful result follows.
func parseGemini(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	var res events.AgentResult
	// The chunks since the last flush and the text since the last
	// tool_result, kept as the decoded strings and joined once: copying each
	// chunk into builders cost more than decoding it.
	var segment []string
	final := textTail{limit: env.textLimit}
	seen := toolIDs{}
	var pending *cliFailure
	flush := func() {
		if text := strings.Join(segment, ""); text != "" {
			report(events.Activity{Kind: events.ActivityText, Text: text})
			final.addString(text)
		}
		segment = nil
	}
	forEachJSONObject(stdout, geminiTypes, func(l *geminiLine) {
		switch l.Type {
		case "message":
			if l.Role == "assistant" {
				segment = append(segment, string(l.Content))
			}
		case "tool_use":
			flush()
			if !seen.first(l.ToolID) {
				return
			}
			newToolUse(geminiTools, l.ToolName, l.Parameters).record(&res, report)
		case "tool_result":
			flush()
			final.reset()
		case "error":
			if l.Severity == "error" {
				pending = newFailure(l.Message, 0, env.now())
			}
		case "result":
			flush()
			if l.Stats != nil {
				u := events.Usage{
					InputTokens:     max(l.Stats.InputTokens-l.Stats.Cached, 0),
					OutputTokens:    l.Stats.OutputTokens,
					CacheReadTokens: l.Stats.Cached,
				}
				if l.Stats.Input != nil {
					u.InputTokens = *l.Stats.Input
				}
				res.Usage = res.Usage.Add(u)
				res.Model = geminiMainModel(l.Stats.Models, res.Model)
				report(events.Activity{Kind: events.ActivityUsage, Usage: u})
			}
			switch l.Status {
			case "success":
				pending = nil
			case "error":
				msg := "result status error"
				if l.Error != nil {
					msg = l.Error.Message
					if msg == "" {
						msg = l.Error.Type
					}
				}
				pending = newFailure(msg, 0, env.now())
			}
		}
	})
	flush()
	final.warn(report)
	res.FinalText = final.String()
	if pending != nil {
		pending.apply(&res, "gemini", geminiAuthHint)
		pending.report(report)
	}
	return res
}

type geminiModelStats struct {
	TotalTokens int64 `json:"total_tokens"`
}

// geminiMainModel is the model of models that used the most tokens (by
// name when two used as many, so the answer does not depend on map order),
// or current when models is empty.
func geminiMainModel(models map[string]geminiModelStats, current string) string {
	best, most := current, int64(-1)
	for name, m := range models {
		if m.TotalTokens > most || (m.TotalTokens == most && name < best) {
			best, most = name, m.TotalTokens
		}
	}
	return best
}

// geminiVerdict keeps the output's verdict, else reads gemini's exit code:
// 41 authentication, 42 bad input, 44 sandbox, 52 configuration, 53 session
// turn limit, 54 fatal tool error, 55 untrusted folder, 130 cancelled; an
// API error exits with its HTTP status modulo 256 (400 → 144, 429 → 173).
func geminiVerdict(res *events.AgentResult, exitCode int, stderrTail string) {
	if res.Failure != events.FailureNone || exitCode == 0 {
		return
	}
	exit := func(msg string) {
		res.Failure = events.FailureExit
		res.FailureMessage = msg
	}
	switch {
	case exitCode == 41:
		res.Failure = events.FailureAuth
		res.FailureMessage = "gemini could not authenticate (exit 41); " + geminiAuthHint
	case exitCode == 42:
		exit("gemini rejected its input (exit 42)")
	case exitCode == 44:
		exit("gemini could not set up its sandbox (exit 44)")
	case exitCode == 52:
		exit("gemini could not load its configuration (exit 52); check ~/.gemini/settings.json and .gemini/settings.json")
	case exitCode == 53:
		exit("gemini reached its session turn limit (exit 53); raise maxSessionTurns in .gemini/settings.json")
	case exitCode == 54:
		exit("a gemini tool failed fatally (exit 54)")
	case exitCode == 55:
		exit("gemini refused to run in an untrusted folder (exit 55); pass --skip-trust or set GEMINI_CLI_TRUST_WORKSPACE=true")
	case exitCode == 130:
		exit("gemini was cancelled (exit 130)")
	case exitCode >= 144 && exitCode <= 255:
		geminiHTTPVerdict(res, exitCode, stderrTail)
	default:
		exitVerdict(res, "gemini", exitCode, stderrTail, geminiAuthHint)
	}
}

// geminiHTTPVerdict explains an exit code that is an HTTP status modulo 256.
func geminiHTTPVerdict(res *events.AgentResult, exitCode int, stderrTail string) {
	status := exitCode + 256
	what := fmt.Sprintf("gemini's model API answered HTTP %d (exit %d)", status, exitCode)
	switch status {
	case 429:
		res.Failure = events.FailureRateLimit
		res.FailureMessage = what + ": too many requests or quota exhausted"
		if f := stderrFailure(stderrTail, time.Now()); f != nil {
			res.RateLimitResetAt = f.resetAt
		}
	case 401, 403:
		res.Failure = events.FailureAuth
		res.FailureMessage = what + "; " + geminiAuthHint
	default:
		res.Failure = events.FailureAgent
		res.FailureMessage = what
	}
}
