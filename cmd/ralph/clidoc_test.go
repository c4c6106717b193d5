package main

// The command-line reference, docs/cli.md, is written from kong's model of
// ralph's command line: every command, its help, arguments, flags with
// their defaults, and examples. It lives with the tests rather than as a
// hidden command of the released binary: only `make docs` runs it, and
// TestCLIReferenceIsCurrent fails when the committed page and the command
// line disagree.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/golden"
)

// cliReference is where the reference is kept, from this package.
var cliReference = filepath.Join("..", "..", "docs", "cli.md")

func TestCLIReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	parser, err := newParser(&cli{}, io.Discard, io.Discard)
	require.NoError(t, err)
	got := renderCLIReference(parser.Model)
	if golden.Updating() {
		require.NoError(t, os.WriteFile(cliReference, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(cliReference)
	require.NoError(t, err, "docs/cli.md is missing; `make docs` writes it")
	if string(want) != got {
		t.Fatalf("docs/cli.md is not what ralph's command line says (a command, flag, default or help text changed): "+
			"run `make docs` to write it again and commit it\n%s", firstDifference(string(want), got))
	}
}

// firstDifference names the first line where the committed page and the
// generated one part.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  committed: %q\n  generated: %q", i+1, wl, gl)
		}
	}
	return ""
}

func renderCLIReference(app *kong.Application) string {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("<!-- Written from ralph's command line by `make docs`; edit the commands' help in cmd/ralph, not this page. -->\n\n")
	fmt.Fprintf(&b, "%s Every command's `--help` says the same as its section here.\n", escapeMarkdown(app.Help))
	b.WriteString("How a run's end becomes an exit code is in [the README](../README.md#exit-codes).\n\n")
	b.WriteString("Flags every command takes:\n\n")
	writeFlagTable(&b, visibleFlags(app.Node))
	b.WriteString("\n## Commands\n\n")
	for _, n := range commandNodes(app.Node) {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", commandName(n), githubAnchor(commandName(n)), escapeMarkdown(n.Help))
	}
	for _, n := range commandNodes(app.Node) {
		writeCommand(&b, n)
	}
	return b.String()
}

// commandName is what a user types to run n: "ralph hats list" (kong's
// Path also names aliases, "loop (run)").
func commandName(n *kong.Node) string {
	return "ralph " + namePath(n)
}

func writeCommand(b *strings.Builder, n *kong.Node) {
	fmt.Fprintf(b, "\n## %s\n\n", commandName(n))
	usage := strings.TrimPrefix(n.Summary(), n.Path())
	fmt.Fprintf(b, "```\n%s%s\n```\n\n", commandName(n), usage)
	if len(n.Aliases) > 0 {
		fmt.Fprintf(b, "Also `ralph %s`.\n\n", strings.Join(aliasPaths(n), "`, `ralph "))
	}
	if n.DefaultCmd != nil {
		fmt.Fprintf(b, "`%s [flags]` runs [`%s`](#%s).\n\n", commandName(n), commandName(n.DefaultCmd),
			githubAnchor(commandName(n.DefaultCmd)))
	}
	fmt.Fprintf(b, "%s\n", escapeMarkdown(n.Help))
	writeDetail(b, n.Detail)
	if len(n.Positional) > 0 {
		b.WriteString("\nArguments:\n\n| argument | what |\n| --- | --- |\n")
		for _, p := range n.Positional {
			fmt.Fprintf(b, "| `%s` | %s |\n", strings.ReplaceAll(p.Summary(), "|", `\|`), cell(p.Help))
		}
	}
	if flags := visibleFlags(n); len(flags) > 0 {
		b.WriteString("\nFlags:\n\n")
		writeFlagTable(b, flags)
	}
	if sub := commandNodes(n); len(sub) > 0 {
		b.WriteString("\nCommands:\n\n")
		for _, c := range sub {
			fmt.Fprintf(b, "- [`%s`](#%s): %s\n", commandName(c), githubAnchor(commandName(c)), escapeMarkdown(c.Help))
		}
	}
}

// aliasPaths are the other ways to type n: "run" for loop.
func aliasPaths(n *kong.Node) []string {
	parent := strings.TrimSuffix(namePath(n), n.Name)
	var out []string
	for _, a := range n.Aliases {
		out = append(out, parent+a)
	}
	return out
}

// writeDetail renders a command's long help: paragraphs as Markdown
// paragraphs, indented blocks as preformatted text, and the examples as a
// shell block.
func writeDetail(b *strings.Builder, detail string) {
	for _, para := range strings.Split(strings.TrimSpace(detail), "\n\n") {
		lines := strings.Split(para, "\n")
		switch {
		case strings.TrimSpace(para) == "":
		case lines[0] == "Examples:" || lines[0] == "Example:":
			b.WriteString("\nExamples:\n\n```sh\n")
			for _, l := range lines[1:] {
				fmt.Fprintf(b, "%s\n", strings.TrimSpace(l))
			}
			b.WriteString("```\n")
		case strings.HasPrefix(lines[0], " "):
			fmt.Fprintf(b, "\n```text\n%s\n```\n", para)
		default:
			fmt.Fprintf(b, "\n%s\n", escapeMarkdown(strings.Join(lines, "\n")))
		}
	}
}

// visibleFlags are the flags n declares itself, without hidden ones and
// kong's --help.
func visibleFlags(n *kong.Node) []*kong.Flag {
	var out []*kong.Flag
	for _, f := range n.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		out = append(out, f)
	}
	return out
}

func writeFlagTable(b *strings.Builder, flags []*kong.Flag) {
	b.WriteString("| flag | default | what |\n| --- | --- | --- |\n")
	for _, f := range flags {
		spelling := "--" + f.Name
		if f.Short != 0 {
			spelling = "-" + string(f.Short) + ", " + spelling
		}
		if !f.IsBool() {
			spelling += "=" + f.FormatPlaceHolder()
		}
		def := ""
		if f.HasDefault {
			def = "`" + f.Default + "`"
		}
		help := f.Help
		if len(f.Tag.Envs) > 0 {
			help += " Environment: `$" + strings.Join(f.Tag.Envs, "`, `$") + "`."
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", strings.ReplaceAll(spelling, "|", `\|`), def, cell(help))
	}
}

// cell is text fit for a table cell: one line, pipes escaped.
func cell(text string) string {
	return strings.ReplaceAll(escapeMarkdown(strings.Join(strings.Fields(text), " ")), "|", `\|`)
}

// escapeMarkdown keeps help text literal in Markdown: outside `code
// spans`, the characters that would start a tag, a quote or emphasis
// (`build.*`) are escaped. Underscores inside words (max_tasks) and
// brackets not followed by a link are literal already.
func escapeMarkdown(text string) string {
	parts := strings.Split(text, "`")
	if len(parts)%2 == 0 {
		// An unpaired backtick: escape it with the rest.
		parts = []string{text}
	}
	r := strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "*", `\*`, "`", "\\`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = r.Replace(parts[i])
	}
	return strings.Join(parts, "`")
}
