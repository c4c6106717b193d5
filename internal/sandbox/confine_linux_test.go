package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// confinedWorld is what an agent of a slot sees: a home with a planted
// secret and a file that is not one, a repository whose linked worktrees
// are the slots, and a plain directory beside them.
type confinedWorld struct {
	home, main, ws, otherSlot, sibling string
}

func newConfinedWorld(t *testing.T) confinedWorld {
	t.Helper()
	w := confinedWorld{home: t.TempDir(), main: gittest.NewRepo(t)}
	gittest.WriteFile(t, w.home, ".ssh/id_probe", "secret\n")
	gittest.WriteFile(t, w.home, "notes.txt", "not a secret\n")
	gittest.CommitFile(t, w.main, "README.md", "hi\n", "start")
	slots := t.TempDir()
	w.ws, w.otherSlot, w.sibling = filepath.Join(slots, "slot1"), filepath.Join(slots, "slot2"), filepath.Join(slots, "sibling")
	gittest.Run(t, w.main, "worktree", "add", "-q", "-b", "ralph/t1", w.ws)
	gittest.Run(t, w.main, "worktree", "add", "-q", "-b", "ralph/t2", w.otherSlot)
	require.NoError(t, os.Mkdir(w.sibling, 0o755))
	return w
}

// run runs script with sh, confined by a, in its workspace; it returns
// the combined output.
func (w confinedWorld) run(t *testing.T, a Agent, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = a.Workspace
	cmd.Env = append(os.Environ(), "HOME="+w.home, "MAIN="+w.main, "OTHER="+w.otherSlot, "SIBLING="+w.sibling,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cleanup, err := a.Confine(cmd)
	require.NoError(t, err)
	defer cleanup()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (w confinedWorld) agent(t *testing.T, mode Mode, network Network) Agent {
	exe, err := os.Executable()
	require.NoError(t, err)
	return Agent{Mode: mode, Workspace: w.ws, Home: w.home, Launcher: exe, Policy: Policy{Network: network}}
}

func requireMode(t *testing.T, mode Mode) Support {
	t.Helper()
	s := Detect()
	switch mode {
	case ModeLandlock:
		if s.LandlockABI < minLandlockABI {
			t.Skipf("this kernel's Landlock is ABI %d; the launcher needs %d (Linux 6.2)", s.LandlockABI, minLandlockABI)
		}
	case ModeBwrap:
		if s.Bwrap == "" {
			t.Skip("bubblewrap is not installed (apt-get install bubblewrap)")
		}
	case ModeOff, ModeAuto, ModeSeatbelt:
		t.Fatalf("no integration test runs %s here", mode)
	}
	return s
}

func TestConfinedAgentWritesOnlyItsWorkspace(t *testing.T) {
	for _, mode := range []Mode{ModeLandlock, ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			requireMode(t, mode)
			w := newConfinedWorld(t)
			a := w.agent(t, mode, NetworkAllow)
			refused := map[string]string{
				"home":       `echo x > "$HOME/probe"`,
				"sibling":    `echo x > "$SIBLING/probe"`,
				"other slot": `echo x > "$OTHER/probe"`,
				"etc":        `echo x > /etc/probe`,
				"secret":     `cat "$HOME/.ssh/id_probe"`,
				"git config": `echo "[core]" >> "$MAIN/.git/config"`,
				"main's ref": `echo x > "$MAIN/.git/refs/heads/main"`,
			}
			t.Cleanup(func() { _ = os.Remove("/etc/probe") })
			for name, script := range refused {
				out, err := w.run(t, a, script)
				assert.Error(t, err, "%s: %s succeeded inside the sandbox: %s", name, script, out)
				if name != "secret" {
					assert.NotEmpty(t, a.Denied(out), "%s: Denied does not recognise %q", name, out)
				}
			}
			assert.NoFileExists(t, filepath.Join(w.home, "probe"))
			assert.NoFileExists(t, filepath.Join(w.sibling, "probe"))
			assert.NoFileExists(t, filepath.Join(w.otherSlot, "probe"))
			assert.NoFileExists(t, "/etc/probe")

			out, err := w.run(t, a, `set -e
echo x > own.txt
echo y > "$TMPDIR/scratch"
cat "$TMPDIR/scratch" "$HOME/notes.txt"
ls "$HOME" >/dev/null
git add own.txt
git -c user.name=T -c user.email=t@example.com commit -q -m own
git log --oneline -1`)
			require.NoError(t, err, out)
			assert.Contains(t, out, "not a secret")
			assert.Contains(t, out, " own")
			assert.Equal(t, gittest.Run(t, w.main, "rev-parse", "ralph/t1"), gittest.Run(t, w.ws, "rev-parse", "HEAD"))
		})
	}
}

// An agent dies with the loop that started it, however it was confined: the
// kernel's parent-death signal must reach the thread that execs the agent,
// which in the Landlock launcher need not be the one its loop set it on.
func TestAConfinedAgentDiesWithItsParent(t *testing.T) {
	for _, mode := range []Mode{ModeLandlock, ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			requireMode(t, mode)
			w := newConfinedWorld(t)
			exe, err := os.Executable()
			require.NoError(t, err)
			for range 5 {
				out, err := w.run(t, w.agent(t, mode, NetworkAllow), `exec "`+exe+`" `+pdeathsigArg)
				require.NoError(t, err, out)
				assert.Equal(t, "9\n", out, "the agent's parent-death signal is SIGKILL")
			}
		})
	}
}

func TestConfinedAgentWithNetworkDenyHasOnlyLoopback(t *testing.T) {
	outside := nonLoopbackIPv4(t)
	l, err := net.Listen("tcp4", net.JoinHostPort(outside, "0"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go acceptAll(l)
	exe, err := os.Executable()
	require.NoError(t, err)
	dial := exe + " " + dialArg + " dial " + l.Addr().String()
	loopback := exe + " " + dialArg + " loopback"

	for _, mode := range []Mode{ModeLandlock, ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			s := requireMode(t, mode)
			if mode == ModeLandlock && !s.NetNamespace {
				t.Skip("this machine cannot give an agent a network namespace of its own (unprivileged user namespaces refused)")
			}
			w := newConfinedWorld(t)
			out, err := w.run(t, w.agent(t, mode, NetworkAllow), dial)
			require.NoError(t, err, "the listener on %s is unreachable even unconfined by the network: %s", l.Addr(), out)

			a := w.agent(t, mode, NetworkDeny)
			out, err = w.run(t, a, dial)
			assert.Error(t, err, "a connection to %s succeeded with network: deny: %s", l.Addr(), out)
			out, err = w.run(t, a, loopback)
			assert.NoError(t, err, "loopback is unusable with network: deny: %s", out)
		})
	}
}

func nonLoopbackIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address to try to reach")
	return ""
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) || err != nil {
			return
		}
		_ = c.Close()
	}
}

func TestLauncherRefusesBadArguments(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	out, err := exec.Command(exe, LauncherArg, "{not json", "--", "/bin/true", "true").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 126, exit.ExitCode())
	assert.True(t, strings.HasPrefix(string(out), "ralph: sandbox: read the rules:"), string(out))
}

func TestDeniedDirectoryAroundTheWorkspaceHidesTheRestOfIt(t *testing.T) {
	for _, mode := range []Mode{ModeLandlock, ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			requireMode(t, mode)
			w := newConfinedWorld(t)
			a := w.agent(t, mode, NetworkAllow)
			a.Policy.DenyRead = []string{filepath.Dir(w.ws)} // every slot's worktree
			out, err := w.run(t, a, `cat "$OTHER/README.md"`)
			assert.Error(t, err, "another slot's file is readable: %s", out)
			out, err = w.run(t, a, `set -e; cat README.md; echo x > own.txt; cat own.txt`)
			assert.NoError(t, err, "the workspace inside the denied directory is unusable: %s", out)
		})
	}
}

// In a main checkout the agent works beside .git: bubblewrap keeps what
// git runs commands from read-only, while a commit still works. Landlock
// cannot carve a part out of a writable tree (see rules.ReadOnly).
func TestBwrapKeepsAMainCheckoutsGitHooksAndConfigReadOnly(t *testing.T) {
	requireMode(t, ModeBwrap)
	w := newConfinedWorld(t)
	a := w.agent(t, ModeBwrap, NetworkAllow)
	a.Workspace = w.main
	for name, script := range map[string]string{
		"config": `echo "[core]" >> .git/config`,
		"hook":   `echo "#!/bin/sh" > .git/hooks/post-commit`,
	} {
		out, err := w.run(t, a, script)
		assert.Error(t, err, "%s: %s succeeded inside the sandbox: %s", name, script, out)
	}
	assert.NoFileExists(t, filepath.Join(w.main, ".git", "hooks", "post-commit"))
	out, err := w.run(t, a, `set -e
echo x > own.txt
git add own.txt
git -c user.name=T -c user.email=t@example.com commit -q -m own`)
	require.NoError(t, err, out)
	assert.Contains(t, gittest.Run(t, w.main, "log", "--format=%s", "-1"), "own")
}
