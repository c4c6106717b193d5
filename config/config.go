// Package config loads and validates ralph.yml.
//
// A config is one or more files merged in order ([Load]): later files over
// earlier ones, mappings key by key, lists and single values replaced. A
// file is YAML; a .json file is read the same way (JSON is YAML), and a
// ralph.json of the form {task, acceptance_criteria, max_iterations,
// budget: {max_tokens}} means event_loop.prompt, acceptance_criteria,
// event_loop.max_iterations and event_loop.max_tokens. ralph-orchestrator's
// ralph.yml loads too: its v1 flat keys are read as their event_loop: and
// cli: equivalents, and the keys ralph does not implement are listed in one
// warning per file ([Config.Warnings]). Top-level keys that start with _
// hold YAML anchors for reuse and are otherwise ignored.
//
// Everything wrong with a config is reported at once, each problem with
// file:line and a hint, as an [*Error].
package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultPath is the config file used when none is given.
const DefaultPath = "ralph.yml"

// Default is the config of an empty file: every default applied, no hats.
func Default() *Config {
	return &Config{
		EventLoop: EventLoop{
			PromptFile:              "PROMPT.md",
			CompletionPromise:       "LOOP_COMPLETE",
			StartingEvent:           "task.start",
			MaxIterations:           100,
			MaxRuntimeSeconds:       14400,
			MaxConsecutiveFailures:  5,
			CompletionConfirmations: 2,
			IterationTimeoutSeconds: 1800,
			IdleTimeoutSeconds:      600,
			KillGraceSeconds:        10,
			MaxOutputLineBytes:      16 << 20,
			MaxOutputTextBytes:      1 << 20,
			MaxActivityBytes:        1 << 20,
			MaxRawOutputBytes:       1 << 30,
			StuckThreshold:          3,
			RateLimitMaxWaitSeconds: 3600,
		},
		CLI:       CLI{Backend: "claude"},
		Memories:  Memories{Enabled: true, Budget: 4000},
		Human:     Human{OnTimeout: "continue"},
		Autopilot: defaultAutopilot(),
	}
}

// Load reads and merges the files at paths, in order, and validates the
// result. The error, if any, is an *Error listing every problem found.
//
// A relative command (cli.command, a hat's backend command) that has a
// slash in it, such as ./agent.sh, names a file next to the config that set
// it, so it is made absolute against that file's directory: it then means
// the same whatever directory ralph runs in. A bare name (claude) is left
// for the PATH lookup.
//
// What is checked is the merged result, so a value that a later file
// replaces is not checked; checking each file alone would instead reject a
// command backend whose command comes from another file.
func Load(paths ...string) (*Config, error) {
	if len(paths) == 0 {
		return nil, problemError(Problem{Msg: "load config: no file given",
			Hint: "pass -c ralph.yml, or run in a directory that has one"}, nil)
	}
	return loadLayered(paths, nil, Options{})
}

// LoadOver loads the layers of opts alone over the defaults, for a command
// run where there is no project config (SPEC mode, or -p without a
// ralph.yml): the user's config and --set still apply.
func LoadOver(opts Options) (*Config, error) {
	return loadLayered(nil, nil, opts)
}

// loadLayered is every Load: the user's file, then the project's files
// (paths) in order, then the hat collection col (nil for none), then the
// --set assignments, each over the one before it.
func loadLayered(paths []string, col *Collection, opts Options) (*Config, error) {
	l := newLoader()
	root := l.merge(l.userLayer(opts.User), l.mergeFiles(paths))
	last := ""
	if len(paths) > 0 {
		last = paths[len(paths)-1]
	}
	if col != nil {
		l.onDisk(col.Name, col.Dir)
		root = l.overlayCollection(root, l.parse(col.Name, col.Data), col.Name)
		last = cmp.Or(last, col.Name)
	}
	for _, s := range l.setLayers(opts.Sets) {
		root = l.merge(root, s)
	}
	c, err := l.finish(root, last)
	if err != nil {
		return nil, err
	}
	if col != nil && col.Dir != "" && c.promptFileAt.file == col.Name {
		c.promptDir = col.Dir
	}
	return c, nil
}

// mergeFiles reads and merges the files in order, later over earlier;
// a file that cannot be read is a problem, and the others still merge.
func (l *loader) mergeFiles(paths []string) *yaml.Node {
	var root *yaml.Node
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			l.readProblem(path, err)
			continue
		}
		l.onDisk(path, "")
		root = l.merge(root, l.parse(path, data))
	}
	return root
}

// LoadBytes loads one file's content; name is how messages call it, and its
// extension says whether it is JSON. The content need not be on disk, so a
// relative command in it is left as written (see [Load]).
func LoadBytes(name string, data []byte) (*Config, error) {
	l := newLoader()
	return l.finish(l.parse(name, data), name)
}

// Layer is the content of one config file that is not on disk, such as
// one an autopilot coordinator sends a worker.
type Layer struct {
	// Name is how messages call the file; its extension says whether it
	// is JSON.
	Name string
	Data []byte
}

// LoadLayers loads layers as Load loads files, later over earlier. None is
// on disk, so a relative command in them is left as written (see
// [Config.RelativeCommands]).
func LoadLayers(layers ...Layer) (*Config, error) {
	if len(layers) == 0 {
		return nil, problemError(Problem{Msg: "load config: no file given"}, nil)
	}
	l := newLoader()
	var root *yaml.Node
	for _, layer := range layers {
		root = l.merge(root, l.parse(layer.Name, layer.Data))
	}
	return l.finish(root, layers[len(layers)-1].Name)
}

// RelativeCommands lists the backend commands of c (cli.command and the
// hats' backend commands) that name a file by a relative path, such as
// ./agent.sh. Load makes these absolute against their file's directory;
// in a config that was not on disk they mean nothing certain.
func (c *Config) RelativeCommands() []string {
	var cmds []string
	add := func(b CLI) {
		for _, c := range append([]CLI{b}, b.Fallback...) {
			if isRelativePath(c.Command) && !slices.Contains(cmds, c.Command) {
				cmds = append(cmds, c.Command)
			}
		}
	}
	add(c.CLI)
	for _, h := range c.Hats {
		if h.Backend != nil {
			add(*h.Backend)
		}
	}
	return cmds
}

// readProblem reports a file that cannot be read.
func (l *loader) readProblem(path string, err error) {
	l.files = append(l.files, path)
	reason := pathReason(err)
	hint := "check the file's permissions"
	if errors.Is(err, fs.ErrNotExist) {
		hint = "check the path given with -c, or run `ralph init` to write a ralph.yml"
	}
	l.problems = append(l.problems, Problem{File: path, Msg: "read config: " + reason, Hint: hint})
	if l.cause == nil {
		l.cause = err
	}
}

// finish decodes the merged tree and turns what was found into the result.
func (l *loader) finish(root *yaml.Node, path string) (*Config, error) {
	c := Default()
	c.Path = path
	if root != nil {
		l.decode(root, c)
	}
	c.promptDir = filepath.Dir(path)
	if c.promptFileAt.file != "" {
		c.promptDir = filepath.Dir(c.promptFileAt.file)
	}
	if len(l.problems) > 0 {
		return nil, &Error{Problems: l.sortedProblems(), cause: l.cause}
	}
	c.layered = l.explained(root)
	c.Warnings = l.warnings()
	c.pathCriteria = l.pathCriteria
	return c, nil
}

// sortedProblems orders problems by file, in the order files were given,
// then by line, so that a long list reads top to bottom.
func (l *loader) sortedProblems() []Problem {
	ps := slices.Clone(l.problems)
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(l.fileIndex(a.File), l.fileIndex(b.File)), cmp.Compare(a.Line, b.Line))
	})
	return ps
}

func (l *loader) fileIndex(file string) int {
	if i := slices.Index(l.files, file); i >= 0 {
		return i
	}
	return len(l.files)
}

// warnings lists the ralph-orchestrator keys ralph ignored: one warning
// per file, so that a preset yields one line rather than a dozen.
func (l *loader) warnings() []string {
	var out []string
	for i, file := range l.files {
		if slices.Index(l.files, file) < i {
			continue // the same file given twice
		}
		var keys []ignoredKey
		for _, k := range l.ignored {
			if k.file == file {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		slices.SortStableFunc(keys, func(a, b ignoredKey) int { return cmp.Compare(a.line, b.line) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s (line %d)", k.path, k.line)
		}
		out = append(out, file+": ignoring keys ralph does not implement: "+strings.Join(parts, ", "))
	}
	return out
}
