package fakemodel

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tool builds a toolSpec from a JSON schema literal.
func tool(t *testing.T, name, schema string) toolSpec {
	t.Helper()
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(schema), &s))
	return toolSpec{name: name, schema: s}
}

// cliTools are the write, shell and read tools each CLI offered (schemas cut
// down to the parameters that matter), as seen in their requests.
func cliTools(t *testing.T) map[string][]toolSpec {
	return map[string][]toolSpec{
		"claude": {
			tool(t, "Write", `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`),
			tool(t, "Bash", `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"},"description":{"type":"string"}},"required":["command"]}`),
			tool(t, "Read", `{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"number"}},"required":["file_path"]}`),
		},
		"codex": {
			tool(t, "exec_command", `{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"]}`),
			{name: "apply_patch", freeform: true},
		},
		"gemini": {
			tool(t, "write_file", `{"type":"OBJECT","properties":{"file_path":{"type":"STRING"},"content":{"type":"STRING"}},"required":["file_path","content"]}`),
			tool(t, "run_shell_command", `{"type":"object","properties":{"command":{"type":"string"},"dir_path":{"type":"string"}},"required":["command"]}`),
			tool(t, "read_file", `{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`),
		},
		"opencode": {
			tool(t, "write", `{"type":"object","properties":{"content":{"type":"string"},"filePath":{"type":"string"}},"required":["content","filePath"]}`),
			tool(t, "bash", `{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}`),
		},
		"copilot": {
			tool(t, "create", `{"type":"object","properties":{"path":{"type":"string"},"file_text":{"type":"string"}},"required":["path","file_text"]}`),
			tool(t, "bash", `{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"mode":{"type":"string","enum":["sync","async"]}},"required":["command","description","mode"]}`),
			tool(t, "view", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		},
		"codex-shell-argv": {
			tool(t, "shell", `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"}},"required":["command"]}`),
		},
		"codex-function-patch": {
			tool(t, "apply_patch", `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`),
		},
		"shell-only": {
			tool(t, "run_command", `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		},
	}
}

func TestMapCall(t *testing.T) {
	const wd = "/work/space"
	write := ToolCall{Write: &WriteCall{Path: "hello.txt", Content: "hello\n"}}
	shell := ToolCall{Shell: &ShellCall{Command: "echo hi >> hello.txt"}}
	read := ToolCall{Read: &ReadCall{Path: "hello.txt"}}
	cases := []struct {
		name, cli string
		call      ToolCall
		want      toolUse
	}{
		{"claude write", "claude", write, toolUse{name: "Write", input: map[string]any{"file_path": wd + "/hello.txt", "content": "hello\n"}}},
		{"claude shell", "claude", shell, toolUse{name: "Bash", input: map[string]any{"command": "echo hi >> hello.txt"}}},
		{"claude read", "claude", read, toolUse{name: "Read", input: map[string]any{"file_path": wd + "/hello.txt"}}},
		{"codex write is a freeform patch", "codex", write, toolUse{name: "apply_patch", freeform: true,
			input: "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"}},
		{"codex shell", "codex", shell, toolUse{name: "exec_command", input: map[string]any{"cmd": "echo hi >> hello.txt"}}},
		{"codex read via shell", "codex", read, toolUse{name: "exec_command", input: map[string]any{"cmd": "cat -- 'hello.txt'"}}},
		{"gemini write (upper-case schema types)", "gemini", write, toolUse{name: "write_file", input: map[string]any{"file_path": wd + "/hello.txt", "content": "hello\n"}}},
		{"gemini shell", "gemini", shell, toolUse{name: "run_shell_command", input: map[string]any{"command": "echo hi >> hello.txt"}}},
		{"opencode write", "opencode", write, toolUse{name: "write", input: map[string]any{"filePath": wd + "/hello.txt", "content": "hello\n"}}},
		{"opencode shell gets a description", "opencode", shell, toolUse{name: "bash", input: map[string]any{"command": "echo hi >> hello.txt", "description": "scripted step"}}},
		{"copilot write", "copilot", write, toolUse{name: "create", input: map[string]any{"path": wd + "/hello.txt", "file_text": "hello\n"}}},
		{"copilot shell fills required enum", "copilot", shell, toolUse{name: "bash", input: map[string]any{"command": "echo hi >> hello.txt", "description": "scripted step", "mode": "sync"}}},
		{"copilot read", "copilot", read, toolUse{name: "view", input: map[string]any{"path": wd + "/hello.txt"}}},
		{"argv shell", "codex-shell-argv", shell, toolUse{name: "shell", input: map[string]any{"command": []any{"bash", "-lc", "echo hi >> hello.txt"}}}},
		{"function apply_patch", "codex-function-patch", write, toolUse{name: "apply_patch",
			input: map[string]any{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"}}},
		{"write falls back to a heredoc", "shell-only", write, toolUse{name: "run_command",
			input: map[string]any{"command": "cat > 'hello.txt' <<'FAKEMODEL_EOF'\nhello\nFAKEMODEL_EOF"}}},
		{"no tools at all keeps the portable call", "none", shell, toolUse{name: "shell", input: map[string]any{"command": "echo hi >> hello.txt"}}},
	}
	tools := cliTools(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := toolMapper{tools: tools[tc.cli], workdir: wd}
			assert.Equal(t, tc.want, m.mapCall(tc.call))
		})
	}
}

func TestMapCallKeepsPathsWithoutWorkdir(t *testing.T) {
	m := toolMapper{tools: cliTools(t)["claude"]}
	got := m.mapCall(ToolCall{Write: &WriteCall{Path: "a/b.txt", Content: "x"}})
	assert.Equal(t, map[string]any{"file_path": "a/b.txt", "content": "x"}, got.input)
}

func TestMapRawCall(t *testing.T) {
	m := toolMapper{tools: cliTools(t)["codex"]}
	got := m.mapCall(ToolCall{Call: &RawCall{Name: "apply_patch", Input: json.RawMessage(`"*** Begin Patch\n*** End Patch\n"`)}})
	assert.Equal(t, toolUse{name: "apply_patch", input: "*** Begin Patch\n*** End Patch\n", freeform: true}, got)

	got = m.mapCall(ToolCall{Call: &RawCall{Name: "exec_command", Input: json.RawMessage(`{"cmd":"ls","yield_time_ms":10}`)}})
	assert.Equal(t, toolUse{name: "exec_command", input: map[string]any{"cmd": "ls", "yield_time_ms": float64(10)}}, got)
}

func TestPatchPathRelativeToWorkdir(t *testing.T) {
	m := toolMapper{tools: cliTools(t)["codex"], workdir: "/w"}
	got := m.mapCall(ToolCall{Write: &WriteCall{Path: "/w/sub/a.txt", Content: "a\nb"}})
	assert.Equal(t, "*** Begin Patch\n*** Add File: sub/a.txt\n+a\n+b\n*** End Patch\n", got.input)
}

// TestWriteCommandWritesExactly runs the shell fallback for contents a
// heredoc alone would get wrong.
func TestWriteCommandWritesExactly(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not available")
	}
	contents := map[string]string{
		"trailing newline":      "hello\n",
		"no trailing newline":   "hello",
		"empty":                 "",
		"quotes and dollars":    "it's $HOME `x` \"q\"\n",
		"delimiter line":        "a\nFAKEMODEL_EOF\nb\n",
		"blank lines":           "\n\nx\n\n",
		"in a new subdirectory": "sub\n",
	}
	for name, content := range contents {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := "out.txt"
			if name == "in a new subdirectory" {
				path = "new/dir/out.txt"
			}
			cmd := exec.Command("bash", "-c", writeCommand(path, content))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			got, err := os.ReadFile(filepath.Join(dir, path))
			require.NoError(t, err)
			assert.Equal(t, content, string(got))
		})
	}
}

func TestFindWorkdir(t *testing.T) {
	existing := t.TempDir()
	cases := []struct {
		name  string
		texts []string
		want  string
	}{
		{"claude", []string{"environment: \n - Primary working directory: /w/claude\n - Is a git repo: false"}, "/w/claude"},
		{"opencode", []string{"<env>\n  Working directory: /w/oc\n  Is directory a git repo: no"}, "/w/oc"},
		{"pi and copilot", []string{"Current date: 2026-11-22\nCurrent working directory: /w/pi"}, "/w/pi"},
		{"qwen", []string{"My operating system is: linux\nI'm currently working in the directory: /w/qwen\n"}, "/w/qwen"},
		{"gemini", []string{"- **Workspace Directories:**\n  - /w/gemini\n- **Directory Structure:**"}, "/w/gemini"},
		{"codex", []string{"<environment_context>\n  <cwd>/w/codex</cwd>\n  <shell>bash</shell>"}, "/w/codex"},
		{"trailing period", []string{"The working directory is /w/dot."}, "/w/dot"},
		{"prose is not a path", []string{"list the files in the current directory, then read docs/commands"}, ""},
		{"existing directory wins", []string{"Working directory: /does/not/exist", "cwd: " + existing}, existing},
		{"nothing", []string{"hello"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, findWorkdir(tc.texts))
		})
	}
}

func TestExampleValue(t *testing.T) {
	cases := []struct {
		name, schema string
		want         any
	}{
		{"gemini router", `{"type":"object","properties":{"complexity_reasoning":{"type":"string"},"complexity_score":{"type":"integer","minimum":1,"maximum":100}},"required":["complexity_reasoning","complexity_score"]}`,
			map[string]any{"complexity_reasoning": "ok", "complexity_score": 1}},
		{"next speaker", `{"type":"OBJECT","properties":{"reasoning":{"type":"STRING"},"next_speaker":{"type":"STRING","enum":["model","user"]}}}`,
			map[string]any{"reasoning": "ok", "next_speaker": "user"}},
		{"first enum", `{"type":"string","enum":["b","a"]}`, "b"},
		{"const", `{"const":7}`, float64(7)},
		{"integer default 1", `{"type":"integer"}`, 1},
		{"number minimum", `{"type":"number","minimum":2.5}`, 2.5},
		{"exclusive minimum", `{"type":"integer","exclusiveMinimum":0}`, 1},
		{"boolean", `{"type":"boolean"}`, false},
		{"nullable type list", `{"type":["null","string"]}`, "ok"},
		{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, 1},
		{"array minItems", `{"type":"array","items":{"type":"string"},"minItems":2}`, []any{"ok", "ok"}},
		{"nested", `{"properties":{"title":{"type":"string"},"meta":{"type":"object","properties":{"n":{"type":"integer"}}}}}`,
			map[string]any{"title": "ok", "meta": map[string]any{"n": 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.schema), &s))
			assert.Equal(t, tc.want, exampleValue("", s, 0))
		})
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*haiku*", "claude-haiku-4-5", true},
		{"*haiku*", "claude-opus-4-8", false},
		{"*flash-lite*", "gemini-3.5-flash-lite", true},
		{"*flash-lite*", "gemini-3.8-flash", false},
		{"gpt-*-mini", "gpt-5-mini", true},
		{"gpt-*-mini", "gpt-5-mini-x", false},
		{"exact", "exact", true},
		{"a*a", "a", false},
		{"*", "", true},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, matchGlob(tc.pattern, tc.name), "%q ~ %q", tc.pattern, tc.name)
	}
}
