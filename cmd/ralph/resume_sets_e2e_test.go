package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/runfiles"
)

// A --set holding a secret's value is written down masked; a resume that
// laid the mask over the config would run the agent with a wrong key. It
// is refused until the secret is given again, and the hint says how.
func TestResumeRefusesASetWhoseSecretWasMasked(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: build\n  max_iterations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		{Sh: `echo "$AGENT_KEY" > "$SCRIPTAGENT_STATE/key-1"`, Say: "working"},
		{Sh: `echo "$AGENT_KEY" > "$SCRIPTAGENT_STATE/key-2"`, Say: `<event topic="LOOP_COMPLETE">done</event>`},
	}})
	const secret = "sk-resume-secret-0123456789abcdef"
	env := []string{"MY_SERVICE_API_KEY=" + secret}

	const plain = "event_loop.max_consecutive_failures=4"
	r := w.ralphEnv(env, "loop", "--set", plain, "--set", "cli.env.AGENT_KEY="+secret)
	require.Equal(t, 2, r.code, r.stderr)
	assert.Equal(t, secret+"\n", readState(t, w, "key-1"))
	for _, name := range w.ralphFiles() {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NotContains(t, string(data), secret, "%s holds the secret", name)
	}

	r = w.ralphEnv(env, "loop", "--resume", "--max-iterations", "2")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--set cli.env.AGENT_KEY: the run was started with a secret there")
	assert.Contains(t, r.stderr, "give it again: ralph loop --resume --set cli.env.AGENT_KEY=<the value>")
	assert.NotContains(t, r.stderr, secret)
	_, err := os.Stat(filepath.Join(w.state, "key-2"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the agent did not run with the mask")

	r = w.ralphEnv(env, "loop", "--resume", "--max-iterations", "2", "--set", plain, "--set", "cli.env.AGENT_KEY="+secret)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, secret+"\n", readState(t, w, "key-2"))
	launch, err := runfiles.PreviousLaunch(w.dir)
	require.NoError(t, err)
	require.NotNil(t, launch)
	// A plain assignment given again is remembered once; the secret's
	// two (its mask, and its value written masked) are one key to give.
	assert.Equal(t, []string{"cli.env.AGENT_KEY=[redacted:AGENT_KEY]", plain, "cli.env.AGENT_KEY=[redacted:AGENT_KEY]"}, launch.Sets)
}

func readState(t *testing.T, w *workspace, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.state, name))
	require.NoError(t, err)
	return string(data)
}

// ralphFiles are the regular files under the workspace's .ralph.
func (w *workspace) ralphFiles() []string {
	w.t.Helper()
	var out []string
	require.NoError(w.t, filepath.WalkDir(filepath.Join(w.dir, ".ralph"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, path)
		}
		return err
	}))
	return out
}

// The autopilot started again after a kill goes on with its --set, but
// not with a secret it could only write down masked.
func TestAutopilotStartedAgainRefusesASetWhoseSecretWasMasked(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "# Work\n\n- [ ] One\n- [ ] Two\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the work")
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); echo "$AGENT_KEY" > "$SCRIPTAGENT_STATE/key-$task"; echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	const secret = "sk-autopilot-secret-0123456789abcdef"
	env := []string{"MY_SERVICE_API_KEY=" + secret}

	killed := w.ralphEnv(append(env, crashEnv+"="+autopilot.FaultRunning+":1"), "autopilot", "--set", "cli.env.AGENT_KEY="+secret)
	require.Equal(t, -1, killed.code, "killed as the first task's loop ran\nstderr:\n%s", killed.stderr)

	r := w.ralphEnv(env, "autopilot")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--set cli.env.AGENT_KEY: the run was started with a secret there")
	assert.Contains(t, r.stderr, "give it again: ralph autopilot --set cli.env.AGENT_KEY=<the value>")

	r = w.ralphEnv(env, "autopilot", "--set", "cli.env.AGENT_KEY="+secret)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, secret+"\n", readState(t, w, "key-two"))
}
