package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestDeniedNamesTheRefusedPathFromRealMessages(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	gittest.WriteFile(t, home, ".ssh/id_probe", "secret")
	h := resolved(t, home)
	a := Agent{Mode: ModeLandlock, Workspace: ws, Home: home, State: []string{filepath.Join(home, ".claude")}}
	write := "the sandbox (landlock) refused a write to /etc/probe: only the workspace (" + ws + "), a private temporary directory and the agent's state (~/.claude) are writable (sandbox.write adds more)"
	// Each message is what the program printed when refused inside the
	// sandbox on this machine.
	for name, text := range map[string]string{
		"sh":        "sh: 1: cannot create /etc/probe: Permission denied",
		"coreutils": "touch: cannot touch '/etc/probe': Permission denied",
		"mkdir":     "mkdir: cannot create directory ‘/etc/probe’: Permission denied",
		"bwrap":     "sh: 1: cannot create /etc/probe: Read-only file system",
		"node":      "node:fs:596\n  return binding.open(\nError: EACCES: permission denied, open '/etc/probe'\n    at Object.openSync (node:fs:596:18)",
		"python":    "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nPermissionError: [Errno 13] Permission denied: '/etc/probe'",
		"go":        "open /etc/probe: permission denied",
		"eperm":     "error: EPERM: operation not permitted, open \"/etc/probe\"",
	} {
		assert.Equal(t, write, a.Denied(text), name)
	}

	assert.Equal(t, "the sandbox (landlock) refused to read "+filepath.Join(h, ".ssh/id_probe")+": ~/.ssh is among the paths no agent may read (the defaults and sandbox.deny_read)",
		a.Denied("cat: "+filepath.Join(h, ".ssh/id_probe")+": Permission denied"))
}

func TestDeniedIsSilentWhereTheSandboxDidNotRefuse(t *testing.T) {
	ws := t.TempDir()
	a := Agent{Mode: ModeBwrap, Workspace: ws}
	for name, text := range map[string]string{
		"no refusal":       "error: /etc/probe: no such file or directory",
		"in the workspace": "touch: cannot touch '" + filepath.Join(ws, "f") + "': Permission denied",
		"proc":             "cat: /proc/1/environ: Permission denied",
		"device":           "sh: 1: cannot create /dev/sda: Permission denied",
		"own temp":         "open /tmp/ralph-agent-123/x: permission denied",
		"no path":          "Error: Permission denied (publickey).",
	} {
		assert.Empty(t, a.Denied(text), name)
	}
	assert.Empty(t, Agent{Mode: ModeOff, Workspace: ws}.Denied("touch: cannot touch '/etc/probe': Permission denied"), "no sandbox, no refusal of its")
}
