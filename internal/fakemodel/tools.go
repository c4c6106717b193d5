package fakemodel

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// toolUse is a concrete tool call in the vocabulary of one request.
type toolUse struct {
	name string
	// input is a JSON object (map) for function tools, a string for freeform ones.
	input    any
	freeform bool
}

// Tool name candidates per portable call, normalised with normName and in
// order of preference. Dedicated write tools beat apply_patch, which beats a
// shell heredoc, because the CLIs report them as file edits.
var (
	writeToolNames = []string{"write", "writefile", "create", "createfile", "filewrite", "writetofile"}
	patchToolNames = []string{"applypatch"}
	shellToolNames = []string{"bash", "runshellcommand", "shell", "execcommand", "shellcommand",
		"executecommand", "runcommand", "runterminalcmd", "terminal", "exec"}
	readToolNames = []string{"read", "readfile", "view", "viewfile", "cat", "fileread"}
)

// Parameter names per role, normalised and in order of preference, for tools
// that have more than one candidate (say both "content" and "text").
var roleParamPreference = map[paramRole][]string{
	rolePath:    {"filepath", "absolutepath", "path", "targetfile", "targetpath", "filepathabsolute", "filename", "file"},
	roleContent: {"content", "filetext", "contents", "newcontent", "filecontent", "text", "data", "body"},
	roleCommand: {"command", "cmd", "commandline", "shellcommand", "script"},
	rolePatch:   {"input", "patch"},
}

// toolMapper turns portable calls into calls of the tools one request offers.
type toolMapper struct {
	tools   []toolSpec
	workdir string
}

func (m toolMapper) mapCall(c ToolCall) toolUse {
	switch {
	case c.Write != nil:
		return m.mapWrite(*c.Write)
	case c.Shell != nil:
		return m.mapShell(c.Shell.Command)
	case c.Read != nil:
		return m.mapRead(*c.Read)
	default:
		return m.mapRaw(*c.Call)
	}
}

func (m toolMapper) mapWrite(w WriteCall) toolUse {
	if t, ok := m.find(writeToolNames, rolePath, roleContent); ok {
		return toolUse{name: t.name, input: fillArgs(t, map[paramRole]any{
			rolePath: m.absPath(w.Path), roleContent: w.Content,
		})}
	}
	if t, ok := m.findPatchTool(); ok {
		patch := addFilePatch(m.relPath(w.Path), w.Content)
		if t.freeform {
			return toolUse{name: t.name, input: patch, freeform: true}
		}
		return toolUse{name: t.name, input: fillArgs(t, map[paramRole]any{rolePatch: patch})}
	}
	// No write tool: write the file from the shell, as a model would.
	if _, ok := m.find(shellToolNames, roleCommand); ok {
		return m.mapShell(writeCommand(w.Path, w.Content))
	}
	return toolUse{name: "write", input: map[string]any{"path": w.Path, "content": w.Content}}
}

func (m toolMapper) mapShell(command string) toolUse {
	if t, ok := m.find(shellToolNames, roleCommand); ok {
		return toolUse{name: t.name, input: fillArgs(t, map[paramRole]any{roleCommand: command})}
	}
	return toolUse{name: "shell", input: map[string]any{"command": command}}
}

func (m toolMapper) mapRead(r ReadCall) toolUse {
	if t, ok := m.find(readToolNames, rolePath); ok {
		return toolUse{name: t.name, input: fillArgs(t, map[paramRole]any{rolePath: m.absPath(r.Path)})}
	}
	if _, ok := m.find(shellToolNames, roleCommand); ok {
		return m.mapShell("cat -- " + shellQuote(r.Path))
	}
	return toolUse{name: "read", input: map[string]any{"path": r.Path}}
}

// mapRaw passes a named call through; its input is a string for freeform tools.
func (m toolMapper) mapRaw(c RawCall) toolUse {
	var input any = map[string]any{}
	if len(c.Input) > 0 {
		_ = json.Unmarshal(c.Input, &input) // validated as JSON when the script was decoded
	}
	_, isText := input.(string)
	for _, t := range m.tools {
		if t.name == c.Name {
			return toolUse{name: t.name, input: input, freeform: t.freeform && isText}
		}
	}
	return toolUse{name: c.Name, input: input, freeform: isText}
}

// find returns the first offered tool whose name is a candidate (earlier
// candidates first) and whose schema has a parameter for every role.
func (m toolMapper) find(candidates []string, roles ...paramRole) (toolSpec, bool) {
	for _, cand := range candidates {
		for _, t := range m.tools {
			if t.freeform || normName(t.name) != cand {
				continue
			}
			if hasRoles(t, roles) {
				return t, true
			}
		}
	}
	return toolSpec{}, false
}

// findPatchTool finds apply_patch, either freeform (Codex with a model it
// knows) or as a function taking the patch in an "input" parameter.
func (m toolMapper) findPatchTool() (toolSpec, bool) {
	for _, t := range m.tools {
		if normName(t.name) != patchToolNames[0] {
			continue
		}
		if t.freeform || hasRoles(t, []paramRole{rolePatch}) {
			return t, true
		}
	}
	return toolSpec{}, false
}

func hasRoles(t toolSpec, roles []paramRole) bool {
	props, _ := schemaProps(t.schema)
	for _, r := range roles {
		if paramFor(props, r) == "" {
			return false
		}
	}
	return true
}

// paramFor picks the parameter that plays a role, by preference order.
func paramFor(props map[string]map[string]any, r paramRole) string {
	byNorm := map[string]string{}
	for name := range props {
		byNorm[normName(name)] = name
	}
	for _, pref := range roleParamPreference[r] {
		if name, ok := byNorm[pref]; ok {
			return name
		}
	}
	return ""
}

// fillArgs builds a tool's arguments: the role values go into the matching
// parameters, and every other required parameter gets a plausible value (a
// "description" gets "scripted step", anything else an example from its
// schema), so strict CLIs such as Copilot accept the call.
func fillArgs(t toolSpec, values map[paramRole]any) map[string]any {
	props, required := schemaProps(t.schema)
	args := map[string]any{}
	for role, v := range values {
		name := paramFor(props, role)
		if name == "" {
			continue
		}
		if cmd, ok := v.(string); ok && role == roleCommand && schemaType(props[name]) == "array" {
			v = []any{"bash", "-lc", cmd} // Codex's older shell tool takes argv
		}
		args[name] = v
	}
	for _, name := range required {
		if _, done := args[name]; done {
			continue
		}
		if strings.Contains(normName(name), "description") {
			args[name] = "scripted step"
			continue
		}
		args[name] = exampleValue(name, props[name], 0)
	}
	return args
}

func (m toolMapper) absPath(p string) string {
	if filepath.IsAbs(p) || m.workdir == "" {
		return p
	}
	return filepath.Join(m.workdir, p)
}

// relPath keeps apply_patch paths relative: Codex's patch grammar expects
// paths relative to the working directory.
func (m toolMapper) relPath(p string) string {
	if !filepath.IsAbs(p) || m.workdir == "" {
		return p
	}
	if rel, err := filepath.Rel(m.workdir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// addFilePatch renders a file creation in the apply_patch grammar.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, line := range strings.SplitAfter(content, "\n") {
		if line == "" {
			continue
		}
		b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

const heredocDelim = "FAKEMODEL_EOF"

// writeCommand is a shell command that writes content to path exactly. A
// heredoc reads best in logs; printf covers content a heredoc would change
// (no trailing newline, or a line equal to the delimiter).
func writeCommand(path, content string) string {
	prefix := ""
	if dir := filepath.Dir(path); dir != "." && dir != "/" {
		prefix = "mkdir -p " + shellQuote(dir) + " && "
	}
	if strings.HasSuffix(content, "\n") && !strings.Contains("\n"+content, "\n"+heredocDelim+"\n") {
		return prefix + "cat > " + shellQuote(path) + " <<'" + heredocDelim + "'\n" + content + heredocDelim
	}
	return prefix + "printf '%s' " + shellQuote(content) + " > " + shellQuote(path)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
