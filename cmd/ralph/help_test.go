package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandPaths are the paths of every command kong knows that a user can
// type ("loop", "hats list", "autopilot"), groups included: a group's
// --help is read too.
func commandPaths(t *testing.T) []string {
	t.Helper()
	parser, err := newParser(&cli{}, io.Discard, io.Discard)
	require.NoError(t, err)
	var paths []string
	var walk func(n *kong.Node, prefix string)
	walk = func(n *kong.Node, prefix string) {
		for _, c := range n.Children {
			if c.Hidden || c.Type != kong.CommandNode {
				continue
			}
			path := strings.TrimSpace(prefix + " " + c.Name)
			paths = append(paths, path)
			walk(c, path)
		}
	}
	walk(parser.Model.Node, "")
	return paths
}

// Every command's --help shows examples, and each example is a command
// line ralph accepts, for that command.
func TestEveryCommandHelpHasExamples(t *testing.T) {
	t.Parallel()
	paths := commandPaths(t)
	require.Greater(t, len(paths), 30, "the walk of kong's model found too few commands")
	file := filepath.Join(t.TempDir(), "exists")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			t.Parallel() // a ralph each: some 70 of them
			r := runRalph(t, append(strings.Fields(path), "--help")...)
			require.Equal(t, 0, r.code, r.stderr)
			examples := helpExamples(r.stdout)
			require.NotEmpty(t, examples, "`ralph %s --help` shows no examples: end the command's Help() with an Examples: section", path)
			for _, ex := range examples {
				args, ok := ralphArgs(ex)
				if !ok {
					continue // another program's line, such as curl against ralph serve
				}
				got, err := parsedCommand(args, file)
				require.NoError(t, err, "the example %q of ralph %s --help does not parse", ex, path)
				assert.True(t, got == path || strings.HasPrefix(got, path+" "),
					"the example %q of ralph %s --help runs ralph %s", ex, path, got)
			}
		})
	}
}

// helpExamples are the lines of the Examples: section of a command's help,
// as kong prints it (indented, up to the next section).
func helpExamples(help string) []string {
	_, after, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			break // the next section: Flags:, Arguments:, Commands:
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// ralphArgs are the arguments of the ralph command in an example's shell
// line (`ralph events --json | jq …`, `source <(ralph completion bash)`,
// `go test ./... | ralph emit build.failed -`), read as sh reads words:
// up to a comment, a pipe, a redirection or the end of a substitution.
func ralphArgs(line string) ([]string, bool) {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	end := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			end()
		case strings.ContainsRune("|;&<>()", r) || r == '#' && !inWord:
			end()
			words = append(words, string(r))
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	end()
	start := -1
	for i, w := range words {
		if w == "ralph" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	var args []string
	for _, w := range words[start:] {
		if len(w) == 1 && strings.Contains("|;&<>()#", w) {
			break
		}
		args = append(args, w)
	}
	return args, true
}

// parsedCommand is the path of the command kong selects for args, without
// running it. A flag that must name an existing file or directory (-C,
// --creds) names one of the reader's machine: file, which exists, stands in
// for it.
func parsedCommand(args []string, file string) (string, error) {
	parser, err := newParser(&cli{}, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	existing := existingFlags(parser.Model.Node, file)
	args = slices.Clone(args)
	for i := range args {
		name, _, _ := strings.Cut(args[i], "=")
		if stand, ok := existing[name]; ok && name != args[i] {
			args[i] = name + "=" + stand
		} else if ok && i+1 < len(args) {
			args[i+1] = stand
		}
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return "", err
	}
	var names []string
	for n := kctx.Selected(); n != nil && n.Type == kong.CommandNode; n = n.Parent {
		names = append([]string{n.Name}, names...)
	}
	return strings.Join(names, " "), nil
}

// existingFlags maps each spelling of a flag under n that must name an
// existing path to one that does: file's directory, or file.
func existingFlags(n *kong.Node, file string) map[string]string {
	m := map[string]string{}
	_ = kong.Visit(n, func(v kong.Visitable, next kong.Next) error {
		if f, ok := v.(*kong.Flag); ok {
			stand := ""
			switch f.Tag.Type {
			case "existingdir":
				stand = filepath.Dir(file)
			case "existingfile":
				stand = file
			}
			if stand != "" {
				m["--"+f.Name] = stand
				if f.Short != 0 {
					m["-"+string(f.Short)] = stand
				}
			}
		}
		return next(nil)
	})
	return m
}

// `ralph autopilot [flags]` runs `ralph autopilot run`, so the help of
// `ralph autopilot` shows the flags it takes.
func TestAutopilotHelpShowsTheRunFlags(t *testing.T) {
	t.Parallel()
	r := runRalph(t, "autopilot", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	for _, flag := range []string{"--parallel=N", "--dry-run", "--max-tasks=N", "--source=TYPE", "--cluster=URLS"} {
		assert.Contains(t, r.stdout, flag)
	}
	assert.Contains(t, r.stdout, "Flags of ralph autopilot [flags] (autopilot run, the default):")
	assert.Contains(t, r.stdout, "autopilot status", "the subcommands are still listed")
	status := runRalph(t, "autopilot", "status", "--help")
	assert.NotContains(t, status.stdout, "--parallel", "status takes none of run's flags")
}
