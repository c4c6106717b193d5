package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The secrets of TestE2ESecretsNeverReachDisk: one in ralph's environment
// under a name that looks secret, one in cli.env, and one under a plain
// name listed under redact:.
var leakedSecrets = map[string]string{
	"TEST_API_KEY":  "sk-ant-e2e-5f1d9c0b7a3e",
	"SERVICE_TOKEN": "tok-from-cli-env-8c2e4a",
	"DATABASE_URL":  "postgres://app:hunter2hunter2@db.internal/app",
}

// leakyAgent leaks every secret it has everywhere it can: its stdout (the
// whole environment, a tool call, a tag), its stderr on a failed first
// attempt (which ralph quotes as the failure), `ralph emit` and the events
// it sends on.
const leakyAgent = `#!/bin/sh
case "$RALPH_HAT" in
builder)
	env
	echo "running curl -H 'x-api-key: $TEST_API_KEY' https://api.example.com"
	if [ ! -f "$LEAK_STATE/failed-once" ]; then
		touch "$LEAK_STATE/failed-once"
		echo "API error 401: invalid token $SERVICE_TOKEN" >&2
		exit 1
	fi
	"$RALPH_BIN" emit build.done "migrated $DATABASE_URL with $TEST_API_KEY"
	echo hello > hello.txt
	;;
reviewer)
	echo "<event topic=\"review.approved\">approved; the key $TEST_API_KEY works</event>"
	;;
*)
	if [ -f hello.txt ]; then
		echo "<event topic=\"LOOP_COMPLETE\">done with $SERVICE_TOKEN</event>"
	else
		echo "<event topic=\"build.task\">use $DATABASE_URL</event>"
	fi
	;;
esac
`

func (w *workspace) leakyAgentConfig() []string {
	w.t.Helper()
	agent := filepath.Join(w.state, "leaky.sh")
	require.NoError(w.t, os.WriteFile(agent, []byte(leakyAgent), 0o755))
	w.write("ralph.yml", twoHatConfig+"redact: [DATABASE_URL]\n"+
		"cli:\n  backend: command\n  command: "+agent+"\n  env:\n    SERVICE_TOKEN: "+leakedSecrets["SERVICE_TOKEN"]+"\n")
	return []string{"LEAK_STATE=" + w.state,
		"TEST_API_KEY=" + leakedSecrets["TEST_API_KEY"], "DATABASE_URL=" + leakedSecrets["DATABASE_URL"]}
}

// assertNoSecret fails for every secret value in text.
func assertNoSecret(t *testing.T, text, where string) {
	t.Helper()
	for name, value := range leakedSecrets {
		assert.NotContains(t, text, value, "%s holds %s", where, name)
	}
}

func TestE2ESecretsNeverReachDisk(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	env := w.leakyAgentConfig()

	r := w.ralphEnv(env, "loop", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	assertNoSecret(t, r.stdout, "the headless stream")
	assertNoSecret(t, r.stderr, "ralph's stderr")
	assert.Contains(t, r.stdout, "[redacted:TEST_API_KEY]", "the agent's printed key, masked in the stream")

	var all strings.Builder
	files := 0
	require.NoError(t, filepath.WalkDir(filepath.Join(w.dir, ".ralph"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assertNoSecret(t, string(data), path)
		all.Write(data)
		files++
		return nil
	}))
	t.Logf("%d files under .ralph/ hold no secret", files)
	activity, err := filepath.Glob(filepath.Join(w.dir, ".ralph", "runs", "*", "activity.jsonl"))
	require.NoError(t, err)
	require.Len(t, activity, 1, "the agents' activity is recorded for ralph watch")
	data, err := os.ReadFile(activity[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), `running curl -H 'x-api-key: [redacted:TEST_API_KEY]'`, "as the agent printed it, masked")
	for _, mask := range []string{"[redacted:TEST_API_KEY]", "[redacted:SERVICE_TOKEN]", "[redacted:DATABASE_URL]"} {
		assert.Contains(t, all.String(), mask, "each secret was leaked, and masked")
	}
	assert.Contains(t, all.String(), "invalid token [redacted:SERVICE_TOKEN]", "the failure quotes the agent's stderr, masked")
	assert.Contains(t, all.String(), "migrated [redacted:DATABASE_URL] with [redacted:TEST_API_KEY]", "ralph emit masks its payload")

	r = w.ralph("events", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assertNoSecret(t, r.stdout, "ralph events")
}

// A value under redact: too short to hide is named, not silently ignored.
func TestE2ERedactWarnsOfAValueTooShortToHide(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "redact: [PIN]\n"+agentCLI())
	w.script(agentScript{Steps: []step{say(tag("LOOP_COMPLETE", "done"))}})
	r := w.ralphEnv([]string{"PIN=1234"}, "loop", "-p", "x", "--max-iterations", "1")
	assert.Contains(t, r.stderr, "redact: PIN is shorter than 8 bytes, so ralph does not hide it")
}

// TestE2ELiveViewHidesSecrets runs the leaky agent in a real terminal: what
// scrolls above the panel is masked too.
func TestE2ELiveViewHidesSecrets(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the live view is tested in a pseudo-terminal through tmux")
	}
	w := newWorkspace(t)
	env := w.leakyAgentConfig()

	socket := fmt.Sprintf("ralph-redact-%d", os.Getpid())
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", socket, "kill-server").Run() })
	args := []string{"-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", "-s", "live", "-e", "TERM=xterm-256color"}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	shell := fmt.Sprintf("cd %q && %q loop -v; echo RALPH-EXIT=$?; sleep 60", w.dir, ralphBin)
	tm(append(args, shell)...)
	// The whole history, not only what is on the screen.
	capture := func() string { return tm("capture-pane", "-p", "-J", "-S", "-", "-t", "live") }

	screen := waitForScreen(t, capture, "RALPH-EXIT=0", 2*time.Minute)
	assertNoSecret(t, screen, "the live view")
	assert.Contains(t, screen, "[redacted:", "the agent's leaks were shown, masked")
}
