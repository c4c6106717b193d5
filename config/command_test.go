package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

// A relative command names a file beside the config that set it, whatever
// directory ralph runs in (ralph -C DIR); each of several merged files
// resolves its own; a bare name stays for the PATH lookup.
func TestLoadResolvesRelativeCommandsAgainstTheirFile(t *testing.T) {
	root := t.TempDir()
	base := writeFile(t, root, "project/ralph.yml",
		"cli:\n  backend: command\n  command: ./agent.sh\nhats:\n"+
			"  builder:\n    triggers: [build.start]\n    backend: {backend: command, command: tools/build.sh}\n"+
			"  reviewer:\n    triggers: [review.start]\n    backend: {model: m}\n"+
			"  planner:\n    triggers: [plan.start]\n    backend: {backend: claude, command: claude-beta}\n")
	over := writeFile(t, root, "shared/agents.yml",
		"hats:\n  fixer:\n    triggers: [fix.start]\n    backend: {backend: command, command: ../bin/fix.sh}\n"+
			"  tester:\n    triggers: [test.start]\n    backend: {backend: command, command: /opt/test.sh}\n")
	t.Chdir(t.TempDir()) // somewhere that is neither file's directory

	c, err := config.Load(base, over)
	require.NoError(t, err)

	project := filepath.Join(root, "project")
	assert.Equal(t, filepath.Join(project, "agent.sh"), c.CLI.Command)
	commands := map[string]string{}
	for _, h := range c.Hats {
		if h.Backend != nil {
			commands[h.ID] = h.Backend.Command
		}
	}
	assert.Equal(t, map[string]string{
		"builder":  filepath.Join(project, "tools", "build.sh"),
		"reviewer": filepath.Join(project, "agent.sh"), // cli's, laid under the hat's model
		"planner":  "claude-beta",                      // a bare name: looked up on PATH
		"fixer":    filepath.Join(root, "bin", "fix.sh"),
		"tester":   "/opt/test.sh",
	}, commands)
}

// A later file that replaces the command brings its own directory with it.
func TestLoadResolvesAReplacedCommandAgainstTheFileThatReplacedIt(t *testing.T) {
	root := t.TempDir()
	base := writeFile(t, root, "a/ralph.yml", "cli:\n  backend: command\n  command: ./agent.sh\n")
	over := writeFile(t, root, "b/local.yml", "cli:\n  command: ./other.sh\n")
	c, err := config.Load(base, over)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "b", "other.sh"), c.CLI.Command)
}

// A hat collection file (-H) resolves against its own directory; a preset,
// which is not a file, against the directory it is given.
func TestLoadWithCollectionResolvesItsCommands(t *testing.T) {
	root := t.TempDir()
	base := writeFile(t, root, "ralph.yml", "event_loop:\n  prompt: x\n")
	hatsData := []byte("hats:\n  builder:\n    triggers: [build.start]\n    backend: {backend: command, command: ./build.sh}\n")

	c, err := config.LoadWithCollection([]string{base}, config.Collection{Name: filepath.Join(root, "hats", "team.yml"), Data: hatsData})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "hats", "build.sh"), c.Hats[0].Backend.Command)

	c, err = config.LoadWithCollection([]string{base}, config.Collection{Name: "preset:x", Data: hatsData, Dir: root})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "build.sh"), c.Hats[0].Backend.Command)
}

// A program and its arguments written as one command are left as written,
// so that the error about them can point at cli.args.
func TestLoadLeavesACommandWithArgumentsAsWritten(t *testing.T) {
	path := writeFile(t, t.TempDir(), "ralph.yml", "cli:\n  backend: command\n  command: sh ./x.sh\n")
	c, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, "sh ./x.sh", c.CLI.Command)
}
