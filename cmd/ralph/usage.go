package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// usagePrinter is kong's help printer, except for the short usage printed
// with a command-line mistake. kong's ends with `Run "ralph loop (run)
// --help"`, which names the alias in a way no shell runs; ralph prints the
// usage line with the command's own path instead, and its own hint after
// (see usageError).
func usagePrinter(options kong.HelpOptions, ctx *kong.Context) error {
	cmd := ctx.Selected()
	if !options.Summary || cmd == nil {
		return kong.DefaultHelpPrinter(options, withDefaultFlags(ctx))
	}
	summary := strings.TrimPrefix(cmd.Summary(), cmd.Path())
	fmt.Fprintf(ctx.Stdout, "Usage: %s%s\n", commandPath(ctx), summary)
	if cmd.Help != "" {
		fmt.Fprintf(ctx.Stdout, "\n%s\n", cmd.Help)
	}
	return nil
}

// withDefaultFlags is ctx with the flags of the selected command's default
// subcommand shown as its own. `ralph autopilot [flags]` runs `ralph
// autopilot run`, but kong's help of a command lists only the flags that
// command declares, so `ralph autopilot --help` would hide every flag that
// ralph autopilot takes. The selected node is copied, not changed: the
// parser's model stays as it is.
func withDefaultFlags(ctx *kong.Context) *kong.Context {
	sel := ctx.Selected()
	if sel == nil || sel.DefaultCmd == nil || len(sel.DefaultCmd.Flags) == 0 {
		return ctx
	}
	group := &kong.Group{Key: "default-command",
		Title: fmt.Sprintf("Flags of %s [flags] (%s, the default):", commandPath(ctx), sel.DefaultCmd.Path())}
	node := *sel
	node.Flags = slices.Clone(sel.Flags)
	for _, f := range sel.DefaultCmd.Flags {
		shown := *f
		shown.Group = group
		node.Flags = append(node.Flags, &shown)
	}
	shown := *ctx
	shown.Path = append(slices.Clone(ctx.Path), &kong.Path{Parent: sel, Command: &node})
	return &shown
}

// commandPath is the command line that selects ctx's command, e.g.
// "ralph memory search": names only, without aliases or arguments, so that
// `<path> --help` runs.
func commandPath(ctx *kong.Context) string {
	var names []string
	for n := ctx.Selected(); n != nil && n.Type == kong.CommandNode; n = n.Parent {
		names = append(names, n.Name)
	}
	names = append(names, ctx.Model.Name)
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return strings.Join(names, " ")
}

// say prints what a request answered, on a line of its own, or fails
// with its error.
func (g *globals) say(answer string, err error) error {
	if err == nil {
		fmt.Fprintln(g.stdout, answer)
	}
	return err
}
