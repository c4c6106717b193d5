package main

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/view"
)

type capabilitiesCmd struct {
	JSON bool `name:"json" help:"Print the contract as one JSON object."`
}

func (capabilitiesCmd) Help() string {
	return `Describes this ralph for programs that drive it: every command and its
flags (type, default, allowed values, environment variable), which commands
print JSON and with which flag (one document, or JSON lines), which change
state (the workspace, .ralph/, git, a tracker, a key file), the exit codes,
the environment variables ralph reads and those it sets for agents, hooks and
task commands, and the versions of the event log's format and of the
--headless stream's schema. It is made from the command line ralph parses, so
it cannot disagree with it. See docs/programs.md.

Examples:
  ralph capabilities
  ralph capabilities --json | jq '.commands[] | select(.changes_state | not) | .path'`
}

// capabilities is what ralph capabilities --json prints. Its field names
// are a contract: add, never rename or remove (CapabilitiesVersion says
// when that had to happen).
type capabilities struct {
	CapabilitiesVersion   int             `json:"capabilities_version"`
	Version               string          `json:"version"`
	GlobalFlags           []capabilityArg `json:"global_flags"`
	Commands              []capabilityCmd `json:"commands"`
	ExitCodes             []exitCodeInfo  `json:"exit_codes"`
	Environment           []envVar        `json:"environment"`
	EventLogFormat        int             `json:"event_log_format"`
	HeadlessSchemaVersion int             `json:"headless_schema_version"`
}

// capabilitiesVersion is raised when a field of capabilities changes
// meaning or goes away.
const capabilitiesVersion = 1

// capabilityCmd is one command: a leaf of the command tree, or a group
// whose default command runs when it is given alone.
type capabilityCmd struct {
	// Path is what follows ralph: "loop", "hats list".
	Path    string   `json:"path"`
	Aliases []string `json:"aliases,omitempty"`
	Help    string   `json:"help"`
	// Default is the path of the command a group runs by itself.
	Default      string `json:"default,omitempty"`
	ChangesState bool   `json:"changes_state"`
	// JSON are the ways it prints JSON on stdout; none when it does not.
	JSON  []jsonOutput    `json:"json"`
	Args  []capabilityArg `json:"args,omitempty"`
	Flags []capabilityArg `json:"flags,omitempty"`
}

// capabilityArg is a flag or a positional argument.
type capabilityArg struct {
	Name  string `json:"name"`
	Short string `json:"short,omitempty"`
	// Type is bool, string, int, number, duration, or []T for a repeatable
	// flag or an argument that takes several values.
	Type     string   `json:"type"`
	Default  string   `json:"default,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	Env      []string `json:"env,omitempty"`
	Required bool     `json:"required,omitempty"`
	Help     string   `json:"help"`
}

// capabilitiesContract is the contract of the command line c models.
func capabilitiesContract(app *kong.Application) capabilities {
	out := capabilities{
		CapabilitiesVersion: capabilitiesVersion, Version: buildVersion(version, buildInfo()),
		GlobalFlags: flagsOf(app.Node), ExitCodes: exitCodes, Environment: environment,
		EventLogFormat: events.FormatVersion, HeadlessSchemaVersion: view.HeadlessSchemaVersion,
	}
	for _, n := range commandNodes(app.Node) {
		if hasSubcommands(n) && n.DefaultCmd == nil {
			continue // a group alone only prints its help
		}
		path := namePath(n)
		t := commandTraits[path]
		c := capabilityCmd{Path: path, Aliases: n.Aliases, Help: n.Help, ChangesState: t.changes,
			Args: argsOf(n), Flags: flagsOf(n)}
		if n.DefaultCmd != nil {
			c.Default = namePath(n.DefaultCmd)
			c.ChangesState = commandTraits[c.Default].changes
		}
		c.JSON = append([]jsonOutput{}, t.json...)
		if n.DefaultCmd != nil {
			c.JSON = append(c.JSON, commandTraits[c.Default].json...)
		}
		out.Commands = append(out.Commands, c)
	}
	return out
}

// hasSubcommands says whether n is a group of commands.
func hasSubcommands(n *kong.Node) bool {
	return slices.ContainsFunc(n.Children, func(c *kong.Node) bool { return c.Type == kong.CommandNode && !c.Hidden })
}

func argsOf(n *kong.Node) []capabilityArg {
	var out []capabilityArg
	for _, p := range n.Positional {
		out = append(out, capabilityArg{Name: p.Name, Type: valueType(p), Default: p.Default,
			Enum: enumOf(p), Required: p.Required, Help: p.Help})
	}
	return out
}

func flagsOf(n *kong.Node) []capabilityArg {
	var out []capabilityArg
	for _, f := range n.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		a := capabilityArg{Name: "--" + f.Name, Type: valueType(f.Value), Default: f.Default, Enum: enumOf(f.Value),
			Env: f.Envs, Required: f.Required, Help: f.Help}
		if f.Short != 0 {
			a.Short = "-" + string(f.Short)
		}
		out = append(out, a)
	}
	return out
}

func enumOf(v *kong.Value) []string {
	if v.Enum == "" {
		return nil
	}
	return strings.Split(v.Enum, ",")
}

// namedTypes are the flag types whose Go type does not say what a user
// types.
var namedTypes = map[reflect.Type]string{
	reflect.TypeFor[time.Duration]():              "duration",
	reflect.TypeFor[flagvalue.RuntimeLimit]():     "duration",
	reflect.TypeFor[flagvalue.PositiveDuration](): "duration",
	reflect.TypeFor[flagvalue.ZeroOrMore]():       "int",
	reflect.TypeFor[flagvalue.OptionalValue]():    "string",
}

// valueType is the type of what v takes, in the words of the contract.
func valueType(v *kong.Value) string {
	if v.IsBool() {
		return "bool"
	}
	return typeName(v.Target.Type())
}

func typeName(t reflect.Type) string {
	if name, ok := namedTypes[t]; ok {
		return name
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "[]" + typeName(t.Elem())
	default:
		return "string"
	}
}

func (c *capabilitiesCmd) Run(g *globals, kctx *kong.Context) error {
	caps := capabilitiesContract(kctx.Model)
	if c.JSON {
		return writeJSON(g.stdout, caps)
	}
	return writeCapabilities(g.stdout, caps)
}

// writeCapabilities is the contract for people: one line per command, then
// the exit codes, the environment and the versions.
func writeCapabilities(w io.Writer, c capabilities) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ralph %s (capabilities %d)\n\ncommand\tchanges state\tJSON\n", c.Version, c.CapabilitiesVersion)
	for _, cmd := range c.Commands {
		changes := "no"
		if cmd.ChangesState {
			changes = "yes"
		}
		fmt.Fprintf(tw, "ralph %s\t%s\t%s\n", cmd.Path, changes, jsonWays(cmd.JSON))
	}
	fmt.Fprintln(tw, "\nexit code\tmeaning")
	for _, e := range c.ExitCodes {
		fmt.Fprintf(tw, "%d\t%s\n", e.Code, e.Meaning)
	}
	fmt.Fprintln(tw, "\nenvironment\tread/set\twhat")
	for _, e := range c.Environment {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.how(), e.What)
	}
	fmt.Fprintf(tw, "\nevent log format\t%d\nheadless schema\t%d\n", c.EventLogFormat, c.HeadlessSchemaVersion)
	return tw.Flush()
}

// commandNodes are the commands under n, depth first, in the order the
// help lists them.
func commandNodes(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if c.Hidden || c.Type != kong.CommandNode {
			continue
		}
		out = append(out, c)
		out = append(out, commandNodes(c)...)
	}
	return out
}

// namePath is n's path from the top without ralph: "hats list" (kong's
// Path also names aliases, "loop (run)").
func namePath(n *kong.Node) string {
	if n.Parent == nil || n.Parent.Type != kong.CommandNode {
		return n.Name
	}
	return namePath(n.Parent) + " " + n.Name
}

// jsonWays says how a command prints JSON, for the text form: "--json
// (document)", "always (document)", "-" for not at all.
func jsonWays(ways []jsonOutput) string {
	if len(ways) == 0 {
		return "-"
	}
	var parts []string
	for _, j := range ways {
		flag := j.Flag
		if flag == "" {
			flag = "always"
		}
		if j.With != "" {
			flag += " " + j.With
		}
		parts = append(parts, flag+" ("+j.Form+")")
	}
	return strings.Join(parts, ", ")
}
