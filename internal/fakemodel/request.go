package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// API names, as they appear in [RequestLog].API.
const (
	APIAnthropic = "anthropic"
	APIChat      = "chat"
	APIResponses = "responses"
	APIGemini    = "gemini"
)

// request is one generation request reduced to what the script engine needs,
// whichever API it came through.
type request struct {
	api      string
	model    string
	stream   bool
	tools    []toolSpec
	messages int
	// history is the conversation so far (messages, input or contents, plus
	// the system prompt); equal histories mean a retry.
	history []byte
	// texts are the prompt's strings, system prompt first, searched for the
	// agent's working directory.
	texts []string
	// jsonSchema is set when the request asks for a JSON answer; an empty map
	// when it asks for JSON without a schema.
	jsonSchema map[string]any
	bodyLen    int
}

// toolSpec is one tool the request offers.
type toolSpec struct {
	name string
	// freeform tools (OpenAI "custom" tools) take raw text, not JSON arguments.
	freeform bool
	schema   map[string]any
}

func (r *request) toolNames() []string {
	names := make([]string, 0, len(r.tools))
	for _, t := range r.tools {
		names = append(names, t.name)
	}
	return names
}

// historyKey hashes the conversation for retry detection.
func historyKey(parts ...json.RawMessage) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return []byte(hex.EncodeToString(h.Sum(nil)))
}

// collectStrings appends every string found in a JSON document, in document
// order, so working-directory hints are found whatever the message shape.
func collectStrings(raw json.RawMessage, out []string) []string {
	if len(raw) == 0 {
		return out
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return out
	}
	return walkStrings(v, out)
}

func walkStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		return append(out, x)
	case []any:
		for _, e := range x {
			out = walkStrings(e, out)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			out = walkStrings(x[k], out)
		}
	}
	return out
}

// workdirPatterns find the agent's working directory in its prompt. Each CLI
// words it differently (seen): Claude Code "Primary working directory: /x",
// OpenCode "Working directory: /x", pi and Copilot "Current working
// directory: /x", Qwen Code "I'm currently working in the directory: /x",
// Gemini CLI "Workspace Directories:** - /x", Codex "<cwd>/x</cwd>". The
// path must follow the phrase closely, so prose such as "the current
// directory, then read docs/x" does not count.
var workdirPatterns = []*regexp.Regexp{
	regexp.MustCompile(`<cwd>\s*(/[^<\n]*?)\s*</cwd>`),
	regexp.MustCompile(`<current_working_directory>\s*(/[^<\n]*?)\s*</current_working_directory>`),
	regexp.MustCompile("(?i)(?:working[ _-]?director(?:y|ies)|working in the directory|workspace director(?:y|ies)|\\bcwd\\b)(?:\\s+is)?[\\s:*=-]{0,12}(/[^\\s'\"<>`,;)]*)"),
}

// findWorkdir returns the agent's working directory named in the prompt, or
// "" when none is named. Among several candidates it prefers one that exists
// as a directory on this machine (the fake server runs beside the agent).
func findWorkdir(texts []string) string {
	var first string
	for _, text := range texts {
		for _, re := range workdirPatterns {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				dir := strings.TrimRight(m[1], ".:")
				if dir == "" || dir == "/" {
					continue
				}
				if st, err := os.Stat(dir); err == nil && st.IsDir() {
					return filepath.Clean(dir)
				}
				if first == "" {
					first = filepath.Clean(dir)
				}
			}
		}
	}
	return first
}
