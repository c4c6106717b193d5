package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/ralph-loop/ralph/internal/golden"
)

// The profiles cannot be run here; these are what ralph hands macOS's
// sandbox-exec, reviewed by hand (go test -run TestSeatbeltProfile -update
// rewrites them).
func TestSeatbeltProfile(t *testing.T) {
	cases := map[string]rules{
		"workspace-only": {
			WriteDirs: []string{"/Users/u/src/app"},
			Devices:   []string{"/dev/null", "/dev/tty"},
		},
		"full": {
			WriteDirs:  []string{"/Users/u/.claude", "/Users/u/src/app", "/private/var/folders/xy/T/ralph-agent-1"},
			WriteFiles: []string{"/Users/u/.claude.json"},
			Devices:    []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx"},
			Deny:       []string{"/Users/u/.aws", "/Users/u/.netrc", "/Users/u/.ssh", `/Users/u/odd "name"\dir`},
		},
		"main-checkout": {
			WriteDirs: []string{"/Users/u/src/app"},
			ReadOnly:  []string{"/Users/u/src/app/.git/config", "/Users/u/src/app/.git/hooks"},
		},
		"network-deny": {
			WriteDirs: []string{"/Users/u/src/app"},
			Deny:      []string{"/Users/u/.ssh"},
			NetDeny:   true,
		},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			golden.Assert(t, filepath.Join("testdata", "seatbelt", name+".sb"), seatbeltProfile(r))
		})
	}
}
