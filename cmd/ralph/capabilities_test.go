package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/view"
)

func kongModel(t *testing.T) *kong.Application {
	t.Helper()
	parser, err := newParser(&cli{}, io.Discard, io.Discard)
	require.NoError(t, err)
	return parser.Model
}

// runnableCommands are the commands of the model that run something: the
// leaves of the tree, by path.
func runnableCommands(app *kong.Application) map[string]*kong.Node {
	out := map[string]*kong.Node{}
	for _, n := range commandNodes(app.Node) {
		if !hasSubcommands(n) {
			out[namePath(n)] = n
		}
	}
	return out
}

// Every command says whether it changes state and how it prints JSON:
// one added without a word in commandTraits fails here, by name.
func TestEveryCommandIsClassified(t *testing.T) {
	t.Parallel()
	commands := runnableCommands(kongModel(t))
	for path, n := range commands {
		tr, ok := commandTraits[path]
		if !assert.True(t, ok, "ralph %s is not classified: add it to commandTraits (cmd/ralph/traits.go), "+
			"saying whether it changes state and how it prints JSON", path) {
			continue
		}
		for _, j := range tr.json {
			for _, flag := range []string{j.Flag, j.With} {
				if flag != "" {
					assert.True(t, hasFlag(n, strings.TrimPrefix(flag, "--")), "ralph %s has no %s, which commandTraits names", path, flag)
				}
			}
			assert.Contains(t, []string{"document", "lines"}, j.Form, "ralph %s", path)
		}
	}
	for path := range commandTraits {
		assert.Contains(t, commands, path, "commandTraits classifies ralph %s, which is no command: remove it", path)
	}
}

func hasFlag(n *kong.Node, name string) bool {
	return slices.ContainsFunc(n.Flags, func(f *kong.Flag) bool { return f.Name == name })
}

// The contract ralph capabilities --json prints is the command line the
// binary parses: every command, every flag with its type, default and
// allowed values, and nothing else.
func TestCapabilitiesMatchTheCommandLine(t *testing.T) {
	t.Parallel()
	r := runRalph(t, "capabilities", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var caps capabilities
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&caps))

	app := kongModel(t)
	byPath := map[string]capabilityCmd{}
	for _, c := range caps.Commands {
		byPath[c.Path] = c
	}
	for path, n := range runnableCommands(app) {
		c, ok := byPath[path]
		if !assert.True(t, ok, "ralph %s is missing from the contract", path) {
			continue
		}
		assert.Equal(t, n.Help, c.Help, path)
		assert.Equal(t, n.Aliases, c.Aliases, path)
		assert.Equal(t, visibleFlagNames(n), contractFlagNames(c.Flags), "the flags of ralph %s", path)
		for _, f := range n.Flags {
			if cf, ok := findContractFlag(c.Flags, f.Name); ok {
				assert.Equal(t, f.Default, cf.Default, "ralph %s --%s", path, f.Name)
				if f.Enum != "" {
					assert.Equal(t, strings.Split(f.Enum, ","), cf.Enum, "ralph %s --%s", path, f.Name)
				}
				assert.NotEmpty(t, cf.Type, "ralph %s --%s", path, f.Name)
			}
		}
		var args []string
		for _, p := range n.Positional {
			args = append(args, p.Name)
		}
		var contractArgs []string
		for _, a := range c.Args {
			contractArgs = append(contractArgs, a.Name)
		}
		assert.Equal(t, args, contractArgs, "the arguments of ralph %s", path)
		assert.Equal(t, commandTraits[path].changes, c.ChangesState, path)
	}
	for path := range byPath {
		n := findCommand(app, path)
		assert.NotNil(t, n, "the contract names ralph %s, which is no command", path)
	}
	assert.Equal(t, visibleFlagNames(app.Node), contractFlagNames(caps.GlobalFlags), "the global flags")

	var codes []int
	for _, e := range caps.ExitCodes {
		codes = append(codes, e.Code)
	}
	assert.Equal(t, []int{exitcode.OK, exitcode.Failure, exitcode.Limit, exitcode.Fatal, exitcode.Interrupted}, codes)
	assert.Equal(t, events.FormatVersion, caps.EventLogFormat)
	assert.Equal(t, view.HeadlessSchemaVersion, caps.HeadlessSchemaVersion)
	assert.Equal(t, capabilitiesVersion, caps.CapabilitiesVersion)

	// A few entries, spelt out, so that a change to how types are named
	// is seen.
	loop := byPath["loop"]
	set, _ := findContractFlag(loop.Flags, "set")
	assert.Equal(t, capabilityArg{Name: "--set", Type: "[]string", Help: set.Help}, set)
	maxRuntime, _ := findContractFlag(loop.Flags, "max-runtime")
	assert.Equal(t, "duration", maxRuntime.Type)
	maxIterations, _ := findContractFlag(loop.Flags, "max-iterations")
	assert.Equal(t, "int", maxIterations.Type)
	format, _ := findContractFlag(byPath["hats graph"].Flags, "format")
	assert.Equal(t, capabilityArg{Name: "--format", Short: "-f", Type: "string", Default: "ascii",
		Enum: []string{"ascii", "mermaid", "dot", "json"}, Help: format.Help}, format)
	assert.Equal(t, []jsonOutput{{Flag: "--headless", Form: "lines"}}, loop.JSON)
	assert.Equal(t, []string{"run"}, loop.Aliases)
	assert.Equal(t, "autopilot run", byPath["autopilot"].Default)
	cluster, _ := findContractFlag(byPath["worker"].Flags, "cluster")
	assert.Equal(t, []string{"RALPH_CLUSTER"}, cluster.Env)
	assert.True(t, cluster.Required)
}

func visibleFlagNames(n *kong.Node) []string {
	var names []string
	for _, f := range n.Flags {
		if !f.Hidden && f.Name != "help" {
			names = append(names, "--"+f.Name)
		}
	}
	return names
}

func contractFlagNames(flags []capabilityArg) []string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Name)
	}
	return names
}

func findContractFlag(flags []capabilityArg, name string) (capabilityArg, bool) {
	i := slices.IndexFunc(flags, func(f capabilityArg) bool { return f.Name == "--"+name })
	if i < 0 {
		return capabilityArg{}, false
	}
	return flags[i], true
}

func findCommand(app *kong.Application, path string) *kong.Node {
	for _, n := range commandNodes(app.Node) {
		if namePath(n) == path {
			return n
		}
	}
	return nil
}

// notEnvironment are RALPH_ names in ralph's code that are not environment
// variables a user or a program meets, each with why.
var notEnvironment = map[string]string{
	"RALPH_TASKS":               "a NATS stream of the cluster (autopilot/cluster/streams.go)",
	"RALPH_RESULTS":             "a NATS stream of the cluster",
	"RALPH_EVENTS":              "a NATS stream of the cluster",
	"RALPH_SANDBOX_NETNS_PROBE": "set by ralph for itself, to probe what the kernel allows (internal/sandbox)",
}

// ralphName is a RALPH_ environment variable's name in Go source: in a
// string, alone or before an =.
var ralphName = regexp.MustCompile(`"(RALPH_[A-Z0-9_]+)[="]`)

// envTag is a kong flag's environment variable.
var envTag = regexp.MustCompile("env:\"([A-Z0-9_]+)\"")

// The environment ralph capabilities lists is the one ralph's code reads
// and sets: every RALPH_ name in its sources and every env tag of its
// flags is listed, and every RALPH_ name listed is still in the code.
func TestEnvironmentIsComplete(t *testing.T) {
	t.Parallel()
	found := map[string]string{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.Contains(path, filepath.Join("internal", "scriptagent")) || strings.Contains(path, filepath.Join("internal", "fake")) {
			return nil // the tests and the test fakes are not ralph
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ralphName.FindAllStringSubmatch(string(data), -1) {
			found[m[1]] = path
		}
		for _, m := range envTag.FindAllStringSubmatch(string(data), -1) {
			found[m[1]] = path
		}
		return nil
	})
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, e := range environment {
		assert.False(t, listed[e.Name], "%s is listed twice", e.Name)
		listed[e.Name] = true
		assert.True(t, e.Read || len(e.SetFor) > 0, "%s is neither read nor set", e.Name)
		assert.NotEmpty(t, e.What, e.Name)
	}
	for name, path := range found {
		if _, skip := notEnvironment[name]; skip {
			continue
		}
		assert.True(t, listed[name], "%s (in %s) is missing from environment (cmd/ralph/environment.go)", name, path)
	}
	for name := range listed {
		if strings.HasPrefix(name, "RALPH_") {
			_, ok := found[name]
			assert.True(t, ok, "environment lists %s, which ralph's code no longer names: remove it", name)
		}
	}
}
