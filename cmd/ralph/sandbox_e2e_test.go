package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/sandbox"
	"github.com/ralph-loop/ralph/runfiles"
)

// probeAgent tries, from inside its sandbox, everything a confined agent
// must not do and the few things it must, and writes what happened to
// probe.txt in its workspace, one "name: ok|denied" line each. It ends the
// loop with `ralph emit`, which must work from inside.
const probeAgent = `#!/bin/sh
try() {
	name=$1
	shift
	if "$@" 2>/dev/null; then echo "$name: ok"; else echo "$name: denied"; fi >> probe.txt
}
try home sh -c 'echo x > "$HOME/probe"'
try bashrc sh -c 'echo x >> "$HOME/.bashrc"'
try sibling sh -c 'echo x > "$PROBE_SIBLING/probe"'
try slot sh -c 'echo x > "$PROBE_OTHER_SLOT/probe"'
try etc sh -c 'echo x > "$PROBE_ETC"'
try ssh cat "$HOME/.ssh/id_probe"
try workspace sh -c 'echo x > own.txt'
try tmp sh -c 'echo x > "$TMPDIR/t" && cat "$TMPDIR/t" >/dev/null'
try commit sh -c 'git add own.txt && git -c user.name=agent -c user.email=agent@example.com commit -qm probe'
try gitconfig sh -c 'echo "# probe" >> "$PROBE_MAIN/.git/config"'
try hooks sh -c 'echo x > "$PROBE_MAIN/.git/hooks/post-merge"'
if [ -n "$PROBE_NET" ]; then
	try net bash -c "exec 3<>/dev/tcp/$PROBE_NET"
fi
try emit "$RALPH_BIN" emit LOOP_COMPLETE probed
`

// sandboxModes are the Linux mechanisms this machine has, each as a
// sub-test; one it lacks is skipped, unless RALPH_REQUIRE_SANDBOX says the
// machine must have them all (CI installs bubblewrap and has Landlock).
func sandboxModes(t *testing.T, run func(t *testing.T, mode sandbox.Mode)) {
	support := sandbox.Detect()
	for _, mode := range []sandbox.Mode{sandbox.ModeLandlock, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			if _, _, err := support.Resolve(mode, sandbox.NetworkAllow); err != nil {
				if os.Getenv("RALPH_REQUIRE_SANDBOX") != "" {
					t.Fatalf("RALPH_REQUIRE_SANDBOX is set but this machine cannot confine with %s: %v", mode, err)
				}
				t.Skipf("this machine cannot confine with %s: %v", mode, err)
			}
			run(t, mode)
		})
	}
}

func TestE2ESandboxKeepsTheAgentInItsWorkspace(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		for _, network := range []sandbox.Network{sandbox.NetworkAllow, sandbox.NetworkDeny} {
			t.Run("network "+string(network), func(t *testing.T) {
				testSandboxProbe(t, mode, network)
			})
		}
	})
}

// sandboxRepo is a repository with two slots' worktrees, as the autopilot
// lays them out: the probe runs in slot a.
type sandboxRepo struct {
	main, slotA, slotB, sibling, home string
}

func newSandboxRepo(t *testing.T) sandboxRepo {
	root := t.TempDir()
	r := sandboxRepo{main: filepath.Join(root, "main"), slotA: filepath.Join(root, "slots", "a"),
		slotB: filepath.Join(root, "slots", "b"), sibling: filepath.Join(root, "sibling"), home: t.TempDir()}
	require.NoError(t, os.MkdirAll(r.main, 0o755))
	require.NoError(t, os.MkdirAll(r.sibling, 0o755))
	git(t, r.main, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(r.main, "README"), []byte("main\n"), 0o644))
	git(t, r.main, "add", "README")
	git(t, r.main, "commit", "-qm", "start")
	git(t, r.main, "worktree", "add", "-q", "-b", "ralph/a", r.slotA)
	git(t, r.main, "worktree", "add", "-q", "-b", "ralph/b", r.slotB)
	require.NoError(t, os.MkdirAll(filepath.Join(r.home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(r.home, ".ssh", "id_probe"), []byte("SECRET-PROBE-KEY\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(r.home, ".bashrc"), []byte("# bashrc\n"), 0o644))
	return r
}

func testSandboxProbe(t *testing.T, mode sandbox.Mode, network sandbox.Network) {
	r := newSandboxRepo(t)
	agent := filepath.Join(t.TempDir(), "probe.sh")
	require.NoError(t, os.WriteFile(agent, []byte(probeAgent), 0o755))
	etc := "/etc/ralph-probe-" + randomHex(t)
	t.Cleanup(func() { _ = os.Remove(etc) })
	gitConfig, err := os.ReadFile(filepath.Join(r.main, ".git", "config"))
	require.NoError(t, err)

	cfg := fmt.Sprintf(`event_loop:
  prompt: Probe the sandbox.
  completion_confirmations: 1
  max_iterations: 2
  max_consecutive_failures: 1
sandbox:
  mode: %s
  network: %s
cli:
  backend: command
  command: %s
`, mode, network, agent)
	require.NoError(t, os.WriteFile(filepath.Join(r.slotA, "ralph.yml"), []byte(cfg), 0o644))
	env := []string{"HOME=" + r.home, "PROBE_SIBLING=" + r.sibling, "PROBE_OTHER_SLOT=" + r.slotB,
		"PROBE_MAIN=" + r.main, "PROBE_ETC=" + etc}
	if addr := outsideListener(t); addr != "" {
		env = append(env, "PROBE_NET="+strings.Replace(addr, ":", "/", 1))
	}
	cmd := exec.CommandContext(t.Context(), ralphBin, "loop", "-c", "ralph.yml")
	cmd.Dir = r.slotA
	cmd.Env = append(os.Environ(), env...)
	res := runProcess(t, cmd)
	probe, _ := os.ReadFile(filepath.Join(r.slotA, "probe.txt"))
	t.Logf("probe.txt:\n%s", probe)
	require.Equal(t, 0, res.code, "ralph loop in the %s sandbox; stderr:\n%s", mode, res.stderr)

	got := probeResults(string(probe))
	want := map[string]string{"home": "denied", "bashrc": "denied", "sibling": "denied", "slot": "denied",
		"etc": "denied", "ssh": "denied", "workspace": "ok", "tmp": "ok", "commit": "ok",
		"gitconfig": "denied", "hooks": "denied", "emit": "ok"}
	if _, ok := got["net"]; ok {
		want["net"] = map[sandbox.Network]string{sandbox.NetworkAllow: "ok", sandbox.NetworkDeny: "denied"}[network]
	}
	assert.Equal(t, want, got)
	assert.NotContains(t, string(probe), "SECRET-PROBE-KEY", "the planted key was read")
	for _, p := range []string{filepath.Join(r.home, "probe"), filepath.Join(r.sibling, "probe"), filepath.Join(r.slotB, "probe"), etc} {
		assert.NoFileExists(t, p)
	}
	after, err := os.ReadFile(filepath.Join(r.main, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, string(gitConfig), string(after), "the main repository's git config changed")
	assert.Contains(t, git(t, r.main, "log", "--format=%s", "ralph/a"), "probe", "the agent's commit is on its branch")

	wantSandbox := string(mode)
	if network == sandbox.NetworkDeny {
		wantSandbox += ", network deny"
	}
	assert.Equal(t, []string{wantSandbox}, iterationSandboxes(t, r.slotA), "iteration.started says how the agent was confined")
	status := runRalph(t, "-C", r.slotA, "status")
	assert.Contains(t, status.stdout, "sandbox: "+wantSandbox)
}

// probeResults reads probe.txt's "name: ok|denied" lines.
func probeResults(probe string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(probe, "\n") {
		if name, verdict, ok := strings.Cut(line, ": "); ok && (verdict == "ok" || verdict == "denied") {
			got[name] = verdict
		}
	}
	return got
}

// iterationSandboxes are the sandbox fields of the iteration.started lines
// of a workspace's current log.
func iterationSandboxes(t *testing.T, dir string) []string {
	w := &workspace{t: t, dir: dir}
	return sandboxesOf(t, w.events())
}

// sandboxesOf are the sandbox fields of the iteration.started lines of recs.
func sandboxesOf(t *testing.T, recs []events.Record) []string {
	var out []string
	for _, rec := range recs {
		if rec.Err != nil || rec.Event.Topic != "iteration.started" {
			continue
		}
		var p struct {
			Sandbox string `json:"sandbox"`
		}
		require.NoError(t, json.Unmarshal(rec.Event.Payload, &p))
		out = append(out, p.Sandbox)
	}
	return out
}

// outsideListener listens on this machine's first address that is not
// loopback and accepts connections until the test ends; "" when the
// machine has none.
func outsideListener(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil {
			continue
		}
		l, err := net.Listen("tcp4", net.JoinHostPort(ipn.IP.String(), "0"))
		if err != nil {
			continue
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
		return l.Addr().String()
	}
	t.Log("no address but loopback here: the network probe is left out")
	return ""
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// intrudingAgent does its task, but first waits until the other slots'
// worktrees exist beside its own and tries to write into each of them
// and into the main checkout, recording every write that succeeded.
const intrudingAgent = `task=$(basename "$PWD")
for i in $(seq 300); do [ "$(ls -d ../*/ | wc -l)" -ge 3 ] && break; sleep 0.1; done
echo "$task saw $(ls -d ../*/ | wc -l)" >> "$SCRIPTAGENT_STATE/seen"
for d in ../*/ ../../; do
	[ "$d" = "../$task/" ] && continue
	if echo x > "$d/intruder-$task" 2>/dev/null; then echo "$task wrote $d" >> "$SCRIPTAGENT_STATE/intrusions"; fi
done
echo "$task" > "$task.txt"`

func TestE2EAutopilotSlotsAreSandboxedFromEachOther(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		w := newAutopilotRepo(t, "  source: tk\n  sandbox:\n    mode: "+string(mode)+"\n")
		w.script(agentScript{Steps: []step{{Sh: intrudingAgent, Commit: "do the task", Say: `<event topic="LOOP_COMPLETE">done</event>`}}})
		var ids []string
		for _, name := range []string{"one", "two", "three"} {
			ids = append(ids, w.run("tk", "create", "Task "+name, "-d", "Do "+name))
		}

		r := w.ralph("autopilot", "--parallel", "3")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

		assert.ElementsMatch(t, ids, w.mergedOrder(), "all three merged")
		seen, err := os.ReadFile(filepath.Join(w.state, "seen"))
		require.NoError(t, err)
		for _, id := range ids {
			assert.Contains(t, string(seen), id+" saw 3", "%s's agent ran beside the two others", id)
		}
		intrusions, _ := os.ReadFile(filepath.Join(w.state, "intrusions"))
		assert.Empty(t, string(intrusions), "a slot's agent wrote outside its worktree")
		out, _ := exec.Command("git", "-C", w.dir, "ls-files", "--others", "--", "intruder-*").Output()
		assert.Empty(t, strings.TrimSpace(string(out)))
		assert.Empty(t, strings.TrimSpace(git(t, w.dir, "log", "--all", "--format=%H", "--", "intruder-*")), "no intruder file reached a commit")
		for _, id := range ids {
			recs, err := events.NewReader(filepath.Join(w.dir, ".ralph", "tasks", id, runfiles.KeptEventsFile), 0).Read()
			require.NoError(t, err)
			assert.Equal(t, []string{string(mode)}, sandboxesOf(t, recs), "task %s's loop says how its agent was confined", id)
		}
		w.assertCleanAfterRun(".tickets")
	})
}

// A mode this machine cannot give is a configuration error, said before
// anything runs, with where it was asked for and what to do.
func TestE2ESandboxModeTheMachineLacksStopsTheRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI()+"event_loop:\n  prompt: Do it.\nsandbox:\n  mode: seatbelt\n")
	r := w.ralph("loop")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph.yml:7: sandbox.mode: seatbelt")
	assert.Contains(t, r.stderr, "ralph: hint:")
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "runs"), "no run was started")
}

// An agent that fails because the sandbox refused it something says so in
// the iteration's failure, which its own words rarely do.
func TestE2ESandboxSaysWhenItMadeTheAgentFail(t *testing.T) {
	t.Parallel()
	sandboxModes(t, func(t *testing.T, mode sandbox.Mode) {
		w := newWorkspace(t)
		home := t.TempDir()
		w.write("ralph.yml", agentCLI()+"event_loop:\n  prompt: Do it.\n  max_consecutive_failures: 1\nsandbox:\n  mode: "+string(mode)+"\n")
		w.script(agentScript{Steps: []step{{Sh: `echo hi > "$HOME/.bashrc"`}}})
		r := w.ralphEnv([]string{"HOME=" + home}, "loop")
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "the sandbox ("+string(mode)+") refused a write to "+filepath.Join(home, ".bashrc"))
		assert.NoFileExists(t, filepath.Join(home, ".bashrc"))
	})
}
