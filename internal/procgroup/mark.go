package procgroup

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
)

// MarkEnv is the environment variable that names the groups a process
// descends from: [Start] adds the new group's [Mark] to what its command
// inherits, so every process started under the group carries it, also one
// that left the group and its session (setsid) and was reparented away.
// Only a process that clears its environment loses it.
const MarkEnv = "RALPH_PROCESS_MARKS"

// Mark is a group's random name in its processes' environments.
type Mark string

// NewMark returns a new, unguessable mark.
func NewMark() Mark {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux or macOS
	return Mark(hex.EncodeToString(b[:]))
}

// valid says m looks like a mark NewMark makes: a mark read back from a
// file must not match every process (an empty one) or a word of another
// variable.
func (m Mark) valid() bool {
	if len(m) != 24 {
		return false
	}
	_, err := hex.DecodeString(string(m))
	return err == nil
}

// tag adds m to the marks cmd's environment carries (cmd.Env, or ralph's
// own environment when it is nil).
func (m Mark) tag(cmd *exec.Cmd) {
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	inherited := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, MarkEnv+"="); ok {
			inherited = v // the last wins, as exec.Cmd keeps it
		}
	}
	// exec.Cmd keeps the last of duplicate keys.
	cmd.Env = append(env[:len(env):len(env)], MarkEnv+"="+strings.TrimSpace(inherited+" "+string(m)))
}

// carries reports whether an environment, as /proc/<pid>/environ holds it
// (NUL-separated), carries mark m.
func carries(environ []byte, m Mark) bool {
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, MarkEnv+"="); ok {
			for _, word := range strings.Fields(v) {
				if word == string(m) {
					return true
				}
			}
		}
	}
	return false
}
