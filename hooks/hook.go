package hooks

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// Topics of the dispatcher's own lines.
const (
	// TopicStarted records, before a hook runs, that it runs for an event.
	TopicStarted = "hook.started"
	// TopicRan records how a hook's run for an event ended.
	TopicRan = "hook.ran"
)

// topicPrefix is what the dispatcher's own topics start with.
const topicPrefix = "hook."

// DefaultTimeout bounds a hook that sets no timeout_seconds.
const DefaultTimeout = 30 * time.Second

// What a failing hook does to the run.
const (
	OnErrorWarn = "warn" // print a warning and go on (the default)
	OnErrorFail = "fail" // end the run as fatal
)

// Hook is one entry of the hooks: section.
type Hook struct {
	// Name identifies the hook in hook.started and hook.ran, and so in the
	// once-per-event bookkeeping: keep it when editing the config of a run
	// that will be resumed. Config makes it hook-1, hook-2, … unless set.
	Name string
	// On are the topic patterns the hook fires on.
	On []string
	// Run is a shell command; Post a URL. Exactly one is set.
	Run  string
	Post string
	// Timeout bounds the hook; zero means DefaultTimeout.
	Timeout time.Duration
	// OnError is OnErrorWarn or OnErrorFail; "" is OnErrorWarn.
	OnError string
}

// Match reports whether pattern matches topic for a hook: as for a hat's
// trigger, except that the dispatcher's own hook.* lines match only a
// pattern that names them.
func Match(pattern, topic string) bool {
	if strings.HasPrefix(topic, topicPrefix) && !strings.HasPrefix(pattern, topicPrefix) {
		return false
	}
	return events.Match(pattern, topic)
}

// Matches reports whether one of the hook's patterns matches topic.
func (h Hook) Matches(topic string) bool {
	for _, p := range h.On {
		if Match(p, topic) {
			return true
		}
	}
	return false
}

func (h Hook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return h.Timeout
}

// CheckCommand says what is wrong with a run: command, for ralph validate:
// its first word must be a program on PATH, or a path (relative to the
// workspace) to an executable file. A first word the shell expands or
// interprets ($VAR, a builtin such as cd or exit) cannot be checked and
// passes. A Windows path written with backslashes is refused: sh reads
// a backslash as an escape, so it would run another path.
func CheckCommand(workspace, command string) error {
	return checkCommand(workspace, command, runtime.GOOS)
}

// checkCommand is CheckCommand on a system goos.
func checkCommand(workspace, command, goos string) error {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return errors.New("the command is empty")
	}
	first := fields[0]
	if backslashPath(first) {
		return fmt.Errorf("%s: sh reads \\ as an escape, not a path separator: write the path with / (%s)", first, strings.ReplaceAll(first, `\`, "/"))
	}
	if strings.ContainsAny(first, "$`'\"(){}=;|&<>*?~\\") || shellBuiltin(first) {
		return nil
	}
	if !strings.Contains(first, "/") {
		if _, err := exec.LookPath(first); err != nil {
			return fmt.Errorf("%s is not on PATH", first)
		}
		return nil
	}
	path := first
	if !filepath.IsAbs(path) {
		path = filepath.Join(workspace, path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s does not exist", first)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", first)
	case goos != "windows" && fi.Mode().Perm()&0o111 == 0:
		// Windows has no execute bit: its sh runs a script by its #! line.
		return fmt.Errorf("%s is not executable (chmod +x %s)", first, first)
	}
	return nil
}

// backslashPath reports whether word is a Windows path written with
// backslashes: a drive's (C:\x), or a relative one (.\x, ..\x).
func backslashPath(word string) bool {
	if strings.HasPrefix(word, `.\`) || strings.HasPrefix(word, `..\`) {
		return true
	}
	return len(word) >= 3 && word[1] == ':' && word[2] == '\\' &&
		('a' <= word[0]|0x20 && word[0]|0x20 <= 'z')
}

func shellBuiltin(word string) bool {
	switch word {
	case "cd", "echo", "exit", "export", "printf", "read", "set", "test", "true", "false", ":", ".", "exec", "if", "for", "while", "case":
		return true
	}
	return false
}

// CheckURL says what is wrong with a post: URL: it must be an absolute
// http or https URL with a host.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q is not an http or https URL", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	return nil
}
