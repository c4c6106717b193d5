package sandbox

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// refusals are how programs word an access the kernel refused: the C
// library's strerror (sh, coreutils, git), Go's lower case, node's error
// codes (EACCES: permission denied, open '…') and Python's
// ([Errno 13] Permission denied: '…').
var refusals = []string{
	"permission denied", "operation not permitted", "read-only file system",
	"eacces", "eperm", "erofs", "[errno 1]", "[errno 13]", "[errno 30]",
}

// quotedPath and barePath find absolute paths in a line: quoted ones first
// ('…', "…", `…`), which may hold spaces, then bare ones, ended by a space,
// a colon or a comma as error messages end them.
var (
	quotedPath = regexp.MustCompile("['\"`‘](/[^'\"`’\n]*)['\"`’]")
	barePath   = regexp.MustCompile(`(?:^|[\s(=])(/[^\s:,'"()]+)`)
)

// notOurs are trees whose refusals are the kernel's own rules, not the
// sandbox's: /proc and /sys answer EPERM and EACCES to anyone.
var notOurs = []string{"/proc", "/sys"}

func denied(a Agent, text string) string {
	if a.Mode == ModeOff || a.Mode == "" {
		return ""
	}
	r, err := buildRules(a, "", false)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(text, "\n") {
		if !refused(line) {
			continue
		}
		for _, p := range linePaths(line) {
			if msg := a.explain(r, p); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func refused(line string) bool {
	lower := strings.ToLower(line)
	for _, r := range refusals {
		if strings.Contains(lower, r) {
			return true
		}
	}
	return false
}

func linePaths(line string) []string {
	var out []string
	for _, m := range quotedPath.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	for _, m := range barePath.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}

// explain says why the sandbox refused p, or "" when it would not have:
// p is writable, or lies where the sandbox does not decide, and so the
// refusal was the file's own permissions.
func (a Agent) explain(r rules, p string) string {
	p = filepath.Clean(p)
	target := realPath(p)
	if target == p {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			target = filepath.Join(dir, filepath.Base(p)) // a file the write would have made
		}
	}
	for _, root := range notOurs {
		if within(target, root) {
			return ""
		}
	}
	if r.hidden(target) && !r.writable(target) {
		return fmt.Sprintf("the sandbox (%s) refused to read %s: %s is among the paths no agent may read (the defaults and sandbox.deny_read)", a.Mode, p, a.deniedRoot(r, target))
	}
	if r.writable(target) || within(target, "/dev") || isTemp(target) {
		return ""
	}
	return fmt.Sprintf("the sandbox (%s) refused a write to %s: only %s are writable (sandbox.write adds more)", a.Mode, p, a.writableSummary())
}

// isTemp is the agent's private temporary directory, which Denied, run
// after it is gone, cannot name: ralph makes them as ralph-agent-*.
func isTemp(p string) bool {
	for dir := p; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if strings.HasPrefix(filepath.Base(dir), "ralph-agent-") {
			return true
		}
	}
	return false
}

func (a Agent) deniedRoot(r rules, p string) string {
	for _, d := range r.Deny {
		if within(p, d) {
			return a.tilde(d)
		}
	}
	return a.tilde(p)
}

// writableSummary names what the agent may write, in the words a user
// configures them with.
func (a Agent) writableSummary() string {
	parts := []string{"the workspace (" + a.tilde(a.Workspace) + ")", "a private temporary directory"}
	if len(a.State) > 0 {
		var names []string
		for _, s := range a.State {
			names = append(names, a.tilde(s))
		}
		parts = append(parts, "the agent's state ("+strings.Join(names, ", ")+")")
	}
	extra := append(append([]string(nil), a.Write...), a.Policy.Write...)
	for _, w := range extra {
		parts = append(parts, a.tilde(w))
	}
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// tilde writes a path under home as ~/…, as users write them.
func (a Agent) tilde(p string) string {
	if a.Home == "" {
		return p
	}
	for _, home := range []string{filepath.Clean(a.Home), realPath(a.Home)} {
		if rel, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
