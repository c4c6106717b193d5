package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// tempVars are the variables programs take their temporary directory from.
var tempVars = []string{"TMPDIR", "TMP", "TEMP"}

func confine(a Agent, cmd *exec.Cmd) (func(), error) {
	if a.Mode == ModeOff || a.Mode == "" {
		return func() {}, nil
	}
	if cmd.Process != nil {
		return nil, errors.New("sandbox: the agent's command has already started")
	}
	tmp, err := os.MkdirTemp("", "ralph-agent-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: make the agent's temporary directory: %w", err)
	}
	cleanup := func() { removeAll(tmp) }
	r, err := buildRules(a, tmp, true)
	if err != nil {
		cleanup()
		return nil, err
	}
	cmd.Env = withTemp(cmd.Env, tmp)
	switch a.Mode {
	case ModeLandlock:
		err = confineLandlock(a, r, cmd)
	case ModeBwrap:
		err = confineBwrap(r, cmd)
	case ModeSeatbelt:
		err = confineSeatbelt(r, cmd)
	default:
		err = fmt.Errorf("sandbox: mode %q confines nothing; resolve it first (Support.Resolve)", a.Mode)
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// withTemp is env (the process's own when nil, as exec.Cmd reads it) with
// the temporary directory variables pointing at tmp.
func withTemp(env []string, tmp string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+len(tempVars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isTempVar(name) {
			out = append(out, kv)
		}
	}
	for _, name := range tempVars {
		out = append(out, name+"="+tmp)
	}
	return out
}

func isTempVar(name string) bool {
	for _, v := range tempVars {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}

// removeAll removes the agent's temporary directory even where the agent
// left directories without write permission (Go's module cache makes
// them read-only), which os.RemoveAll alone cannot empty.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
