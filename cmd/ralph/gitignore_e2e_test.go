package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// committingAgent is an agent with two common habits: it commits with
// `git add -A` and tidies up with `git clean -fd`.
const committingAgent = `#!/bin/sh
set -e
case "$RALPH_HAT" in
builder)
	echo "work $RALPH_ITERATION" >> work.txt
	git add -A
	git -c user.name=agent -c user.email=agent@example.com commit -qm "iteration $RALPH_ITERATION"
	git clean -fdq
	echo '<event topic="build.done">committed</event>'
	;;
reviewer)
	echo '<event topic="review.approved">ok</event>'
	;;
*)
	if [ -f work.txt ]; then
		echo '<event topic="LOOP_COMPLETE">done</event>'
	else
		echo '<event topic="build.task">work</event>'
	fi
	;;
esac
`

func (w *workspace) committingAgentConfig(extra string) {
	w.t.Helper()
	w.agentConfig(committingAgent, extra)
}

// agentConfig makes script the agent of the two-hat config, and commits
// the config.
func (w *workspace) agentConfig(script, extra string) {
	w.t.Helper()
	agent := filepath.Join(w.state, "agent.sh")
	require.NoError(w.t, os.WriteFile(agent, []byte(script), 0o755))
	w.write("ralph.yml", twoHatConfig+extra+"cli:\n  backend: command\n  command: "+agent+"\n")
	git(w.t, w.dir, "add", "ralph.yml")
	git(w.t, w.dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "config")
}

func TestE2EAgentCommitsNothingOfRalphs(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.committingAgentConfig("")
	require.Equal(t, 0, w.ralph("memory", "add", "The build needs Go 1.26").code)

	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)

	tracked := git(t, w.dir, "ls-files")
	assert.Contains(t, tracked, "work.txt", "the agent did commit its work")
	assert.NotContains(t, tracked, ".ralph", "ralph's files reached a commit")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain", "--untracked-files=all")),
		"git status shows nothing of ralph's")
	assert.FileExists(t, filepath.Join(w.dir, ".ralph", "state.json"), "git clean -fd left .ralph/ alone")
	assert.FileExists(t, filepath.Join(w.dir, ".ralph", "agent", "memories.md"))
	assert.Equal(t, "terminate completed", last(w.flow()))
}

func TestE2ESharedMemoriesAreTheOnlyFileGitSees(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.committingAgentConfig("memories:\n  shared: true\n")
	require.Equal(t, 0, w.ralph("memory", "add", "The build needs Go 1.26").code)

	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)

	var ralphs []string
	for _, f := range strings.Fields(git(t, w.dir, "ls-files")) {
		if strings.HasPrefix(f, ".ralph/") {
			ralphs = append(ralphs, f)
		}
	}
	assert.Equal(t, []string{".ralph/agent/memories.md"}, ralphs, "only the shared memories were committed")
}

// An agent may delete .ralph/ anyway: git clean -x cleans ignored files too,
// and rm -rf needs no reason. The run says so, keeps what it holds in
// memory, ends as fatal, and resumes from there.
func TestE2EAgentDeletesRalphDir(t *testing.T) {
	t.Parallel()
	for name, how := range map[string]string{"git clean -fdx": "git clean -fdxq", "rm -rf": "rm -rf .ralph"} {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			// Only the first builder iteration deletes it.
			w.agentConfig(strings.Replace(committingAgent, "\tgit clean -fdq\n",
				"\tif [ ! -f \"$SCRIPTAGENT_STATE/cleaned\" ]; then touch \"$SCRIPTAGENT_STATE/cleaned\"; "+how+"; fi\n", 1), "")

			r := w.ralph("loop")
			require.Equal(t, 3, r.code, r.stderr)
			assert.Contains(t, r.stderr, ".ralph/ was deleted while the run was going")
			assert.Contains(t, r.stderr, "ralph loop --resume")
			assert.NotContains(t, r.stderr, "no such file or directory", "no raw file error")
			assert.Equal(t, "terminate fatal", last(w.flow()))

			r = w.ralph("loop", "--resume")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, "terminate completed", last(w.flow()))
		})
	}
}
