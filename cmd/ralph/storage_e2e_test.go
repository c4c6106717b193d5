package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A write to one of ralph's files fails as a full, read-only or broken disk
// would fail it. The run ends as fatal with the file and the error named,
// what was written stays consistent, and --resume finishes the run with
// every event decided once.
func TestE2EWriteFailureEndsTheRunAndResumeFinishesIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault string
		says  string
	}{
		{"eventlog:6:ENOSPC", "cannot append to the event log %s/.ralph/events-"},
		{"checkpoint:5:EIO", "cannot write the checkpoint %s/.ralph/state.json: input/output error"},
		{"rawoutput:3:EFBIG", "cannot keep the agent's raw output in %s/.ralph/runs/"},
		{"prompt:2:ENOSPC", "cannot keep the agent's prompt in %s/.ralph/runs/"},
		{"eventlog:11:EROFS", "read-only file system"},
		{"checkpoint:2:EDQUOT", "disk quota exceeded"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", crashConfig+agentCLI())
			w.script(crashScript())

			r := w.ralphEnv([]string{writeFaultEnv + "=" + c.fault}, "loop")
			require.Equal(t, 3, r.code, r.stderr)
			says := c.says
			if strings.Contains(says, "%s") {
				says = fmt.Sprintf(says, w.dir)
			}
			assert.Contains(t, r.stderr, says)
			assert.Contains(t, r.stderr, "ralph loop --resume", "the hint says how to go on")
			w.assertStateReadable()

			r = w.ralph("loop", "--resume")
			require.Equal(t, 0, r.code, r.stderr)
			w.assertRunIntact()
		})
	}
}

// diskAgent fills the disk in its second iteration, once: $MARK, outside
// the small file system, remembers it did. Its payloads carry its pid, so
// each agent run's events can be told apart.
const diskAgent = `#!/bin/sh
n=$RALPH_ITERATION
"$RALPH_BIN" emit work.step "step $n pid $$"
if [ "$n" = 2 ] && [ ! -e "$MARK" ]; then
	touch "$MARK"
	dd if=/dev/zero of=filler bs=4096 2>/dev/null || true
	echo "the disk is full now; this line has nowhere to go"
fi
if [ "$n" -ge 3 ]; then
	echo "<event topic=\"LOOP_COMPLETE\">done by $$</event>"
fi
`

// smallFS mounts a 2 MiB tmpfs for the test, or skips when this machine
// does not let the test mount one (it needs root).
func smallFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// A disk that really fills up while the agent runs. (A file system cannot
// be made read-only under ralph for real: remounting it read-only fails
// while ralph has its log open for writing; the injected EROFS above
// stands for it.)
func TestE2ERealDiskFull(t *testing.T) {
	t.Parallel()
	dir := smallFS(t)
	w := &workspace{t: t, dir: dir, state: t.TempDir()}
	git(t, dir, "init", "-q", ".")
	agent := filepath.Join(w.state, "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(diskAgent), 0o755))
	w.write("ralph.yml", "event_loop:\n  prompt: Work in three steps.\n  max_iterations: 8\n"+
		"cli:\n  backend: command\n  command: "+agent+"\n")
	env := []string{"MARK=" + filepath.Join(w.state, "filled")}

	r := w.ralphEnv(env, "loop")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Regexp(t, `cannot [a-z' ]+ `+regexp.QuoteMeta(dir)+`/\.ralph/\S+: no space left on device`, r.stderr)
	assert.Contains(t, r.stderr, "free space on the file system that holds")
	w.assertStateReadable()

	require.NoError(t, os.Remove(filepath.Join(dir, "filler")))
	r = w.ralphEnv(env, "loop", "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	w.assertRunIntact()
}
