package backends

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ralph-loop/ralph/events"
)

// Codex: `codex exec --json` prints JSON lines thread.started, turn.started,
// item.started/updated/completed {item:{id,type,…}}, turn.completed {usage},
// turn.failed {error:{message}} and error {message}; see
// docs/agent-clis.md#codex.

const codexAuthHint = "run `codex login`, or set OPENAI_API_KEY (or the env_key of your model provider)"

func init() {
	register(&cliSpec{
		name:    "codex",
		binary:  "codex",
		install: "install it with: npm install -g @openai/codex",
		args:    codexArgs,
		stdin:   stdinAlways,
		env:     func(Options) []string { return nil },
		parse:   parseCodex,
		// codex exec --json does not name the model it runs.
		defaultModel: codexDefaultModel,
		verdict: func(res *events.AgentResult, exitCode int, stderrTail string) {
			exitVerdict(res, "codex", exitCode, stderrTail, codexAuthHint)
		},
	})
}

// codexModelLine is a top-level `model = "…"` of Codex's config.toml.
var codexModelLine = lazyRegexp(`^model\s*=\s*"([^"]+)"`)

// codexDefaultModel is the model $CODEX_HOME/config.toml (~/.codex by
// default) names before its first table, which codex runs when not given
// -m; "" when the file or the key is missing.
func codexDefaultModel(e diagEnv) string {
	data, err := os.ReadFile(filepath.Join(e.dir("CODEX_HOME", ".codex"), "config.toml"))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			return ""
		}
		if m := codexModelLine().FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}

// codexArgs builds `codex exec --json --skip-git-repo-check
// --dangerously-bypass-approvals-and-sandbox [-m M] [args…] -`: the prompt
// "-" is read from stdin. As an argument it is `-- PROMPT`: the "--" keeps
// a prompt that starts with "-" or reads like a subcommand ("resume") a
// prompt, and the runner gives codex /dev/null, because codex appends a
// piped stdin to an argument prompt.
func codexArgs(o Options, prompt string, onStdin bool) []string {
	args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}
	args = append(args, modelArgs("-m", o.Model)...)
	args = append(args, o.Args...)
	if onStdin {
		return append(args, "-")
	}
	return append(args, "--", prompt)
}

type codexLine struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item  *codexItem `json:"item"`
	Usage *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Text    longString   `json:"text"`
	Command codexCommand `json:"command"`
	Changes []struct {
		Path string `json:"path"`
	} `json:"changes"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// codexTypes has a case of parseCodex's switch each; lines of other types
// are skipped undecoded.
var codexTypes = newLineTypes("item.started", "item.updated", "item.completed", "turn.completed", "turn.failed", "error")

// parseCodex reads `codex exec --json` output.
//
//   - Final text: the text of the last completed agent_message item.
//   - Tools: one use per item id, whether it shows up in item.started,
//     item.updated or only item.completed: command_execution is shell,
//     file_change (apply_patch) is write, mcp_tool_call, web_search and
//     collab_tool_call are other. A command that fails (status "failed",
//     exit_code 1) is still just a tool use. Reasoning, todo_list (the
//     plan) and error items are not tool uses; error items are warnings
//     such as "Model metadata for `X` not found" and never fail the run.
//   - Usage: summed over turn.completed; input_tokens includes
//     cached_input_tokens (OpenAI convention), so the cached part is
//     counted as cache reads. Codex reports no cost.
//   - Failure: a turn.failed line, or an error line that no turn.completed
//     follows (codex may report errors it then recovers from).
func parseCodex(stdout io.Reader, report func(events.Activity), env parseEnv) events.AgentResult {
	var res events.AgentResult
	seen := toolIDs{}
	var pending *cliFailure
	forEachJSONObject(stdout, codexTypes, func(l *codexLine) {
		switch l.Type {
		case "item.started", "item.updated", "item.completed":
			if l.Item != nil {
				codexItemEvent(&res, report, seen, l.Type, l.Item)
			}
		case "turn.completed":
			pending = nil
			if l.Usage == nil {
				return
			}
			u := events.Usage{
				InputTokens:      max(l.Usage.InputTokens-l.Usage.CachedInputTokens, 0),
				OutputTokens:     l.Usage.OutputTokens,
				CacheReadTokens:  l.Usage.CachedInputTokens,
				CacheWriteTokens: l.Usage.CacheWriteInputTokens,
			}
			res.Usage = res.Usage.Add(u)
			report(events.Activity{Kind: events.ActivityUsage, Usage: u})
		case "turn.failed":
			msg := l.Message
			if l.Error != nil {
				msg = l.Error.Message
			}
			f := newFailure(msg, 0, env.now())
			// Keep an earlier, more specific error line of the same turn.
			if pending == nil || pending.kind == events.FailureAgent || f.kind != events.FailureAgent {
				pending = f
			}
		case "error":
			pending = newFailure(l.Message, 0, env.now())
		}
	})
	if pending != nil {
		pending.apply(&res, "codex", codexAuthHint)
		pending.report(report)
	}
	return res
}

func codexItemEvent(res *events.AgentResult, report func(events.Activity), seen toolIDs, typ string, it *codexItem) {
	if it.Type == "agent_message" {
		if typ == "item.completed" {
			res.FinalText = string(it.Text)
			if it.Text != "" {
				report(events.Activity{Kind: events.ActivityText, Text: res.FinalText})
			}
		}
		return
	}
	if !codexToolItems[it.Type] {
		return
	}
	// Without an id to match started and completed, count completions only.
	if (it.ID == "" && typ != "item.completed") || !seen.first(it.ID) {
		return
	}
	// Built only once per use: started and completed both carry the
	// command, which can be long.
	codexToolUse(it).record(res, report)
}

// codexToolItems are the item types that are tool uses.
var codexToolItems = map[string]bool{
	"command_execution": true, "file_change": true, "mcp_tool_call": true, "web_search": true, "collab_tool_call": true,
}

func codexToolUse(it *codexItem) toolUse {
	switch it.Type {
	case "command_execution":
		return toolUse{kind: events.ToolShell, name: it.Type, command: unwrapShell(it.Command.String())}
	case "file_change":
		u := toolUse{kind: events.ToolWrite, name: it.Type}
		if len(it.Changes) > 0 {
			u.path = it.Changes[0].Path
		}
		return u
	case "mcp_tool_call":
		u := toolUse{kind: events.ToolOther, name: it.Tool}
		if it.Server != "" {
			u.name = it.Server + "/" + it.Tool
		}
		return u
	default: // web_search, collab_tool_call
		return toolUse{kind: events.ToolOther, name: it.Type}
	}
}

// codexCommand is an item's command: a string, or an argv array in old
// versions. It decodes as an any field would, into v, but a string with
// one allocation (longString). Decoded rather than kept raw, which would
// cost two more passes over it.
type codexCommand struct{ v any }

func (c *codexCommand) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '"' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		c.v = unquote(v)
		return nil
	}
	var v any
	err := jsonv2.UnmarshalDecode(dec, &v)
	var typeErr *jsonv1.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return err
	}
	c.v = v // as far as it decoded, like an any field of the wrong type
	return nil
}

// String reads the command, joining an argv array of strings (a null
// element is an empty word); anything else is no command.
func (c codexCommand) String() string {
	switch v := c.v.(type) {
	case string:
		return v
	case []any:
		argv := make([]string, len(v))
		for i, w := range v {
			switch w := w.(type) {
			case string:
				argv[i] = w
			case nil:
			default:
				return ""
			}
		}
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			return argv[2]
		}
		return strings.Join(argv, " ")
	}
	return ""
}
