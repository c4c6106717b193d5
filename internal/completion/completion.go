// Package completion completes ralph's command line in bash, zsh and fish.
// The shell runs ralph itself to complete a line (COMP_LINE, the protocol
// of bash's `complete -C`, which zsh's bashcompinit and a fish function
// speak too), and ralph answers from kong's model of its command line
// (kongplete), so a new command or flag is completed without a change
// here. What the model does not say — a command's aliases, the choices of
// a flag named in Options, files where a flag takes a file — this package
// adds; what only the workspace knows (its hat ids) the caller predicts.
package completion

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"
	"github.com/willabides/kongplete"
)

// Options are the facts about flags that kong's model lacks.
type Options struct {
	// FlagValues lists the choices of flags by flag name (presets,
	// backends).
	FlagValues map[string]func() []string
	// ValueOrFile names the flags whose value may be one of their choices
	// or a file (-H: a preset or a hat collection file).
	ValueOrFile []string
	// Predictors complete the arguments and flags whose field has a
	// `predictor:"NAME"` tag, by NAME.
	Predictors map[string]complete.Predictor
}

// Requested reports whether a shell runs this process to complete a
// command line rather than to run it.
func Requested() bool {
	return os.Getenv("COMP_LINE") != ""
}

// LineFlag is the value the line being completed gives the flag named by
// one of names ("-C", "--dir"), or "". A predictor sees only the words
// after the last command, and a global flag may stand before it.
func LineFlag(names ...string) string {
	words := strings.Fields(os.Getenv("COMP_LINE"))
	for i, w := range words {
		for _, name := range names {
			if v, ok := strings.CutPrefix(w, name+"="); ok {
				return v
			}
			if w == name && i+1 < len(words) {
				return words[i+1]
			}
		}
	}
	return ""
}

// Complete writes to w the completions of the command line the shell
// gives in COMP_LINE (up to COMP_POINT), one a line.
func Complete(w io.Writer, parser *kong.Kong, opts Options) error {
	cmd, err := kongplete.Command(parser, kongplete.WithPredictors(opts.Predictors))
	if err != nil {
		return err
	}
	addFromModel(cmd, parser.Model.Node, opts)
	c := complete.New(parser.Model.Name, cmd)
	c.Out = w
	c.Complete()
	return nil
}

// addFromModel adds to cmd, built by kongplete from node, the aliases of
// node's commands and the predictions of its flags that kongplete leaves
// to a tag.
func addFromModel(cmd complete.Command, node *kong.Node, opts Options) {
	for _, f := range node.Flags {
		if f.Hidden || f.Tag.Has("predictor") {
			continue
		}
		if p := flagPredictor(f, opts); p != nil {
			cmd.GlobalFlags["--"+f.Name] = p
			if f.Short != 0 {
				cmd.GlobalFlags["-"+string(f.Short)] = p
			}
		}
	}
	for _, child := range node.Children {
		sub, ok := cmd.Sub[child.Name]
		if !ok {
			continue // hidden
		}
		addFromModel(sub, child, opts)
		for _, alias := range child.Aliases {
			cmd.Sub[alias] = sub
		}
	}
}

// flagPredictor completes f's value from its name in opts, its type or its
// placeholder; nil leaves kongplete's.
func flagPredictor(f *kong.Flag, opts Options) complete.Predictor {
	if f.IsBool() || f.IsCounter() || f.Enum != "" {
		return nil
	}
	typ := f.Tag.Type
	switch {
	case opts.FlagValues[f.Name] != nil:
		values := complete.PredictSet(opts.FlagValues[f.Name]()...)
		if slices.Contains(opts.ValueOrFile, f.Name) {
			return complete.PredictOr(values, complete.PredictFiles("*"))
		}
		return values
	case typ == "existingdir" || strings.Contains(f.PlaceHolder, "DIR"):
		return complete.PredictDirs("*")
	case typ == "path" || typ == "existingfile" || strings.Contains(f.PlaceHolder, "FILE"):
		return complete.PredictFiles("*")
	}
	return nil
}

// Script writes what `ralph completion SHELL` prints for the user to
// source: it registers bin, the program's absolute path, to complete name.
func Script(w io.Writer, shell, name, bin string) error {
	bin = shellQuote(bin)
	var script string
	switch shell {
	case "bash":
		// filenames: a directory completed takes a slash and no space.
		script = "complete -o filenames -C " + bin + " " + name + "\n"
	case "zsh":
		script = "autoload -U +X bashcompinit && bashcompinit\ncomplete -C " + bin + " " + name + "\n"
	case "fish":
		// fish has no COMP_LINE of its own: the function sets it to the
		// line up to the cursor, with the space that starts a new word.
		fn := "__complete_" + name
		script = "function " + fn + "\n" +
			"    set -lx COMP_LINE (commandline -cp)\n" +
			"    test -z (commandline -ct)\n" +
			"    and set COMP_LINE \"$COMP_LINE \"\n" +
			"    " + bin + "\n" +
			"end\n" +
			"complete -f -c " + name + " -a \"(" + fn + ")\"\n"
	default:
		return fmt.Errorf("no completion for shell %q: bash, zsh or fish", shell)
	}
	_, err := io.WriteString(w, "# "+shell+" completion for "+name+", by `"+name+" completion "+shell+"`: "+name+
		" completes its own command line.\n"+script)
	return err
}

// shellQuote quotes s for bash, zsh and fish alike.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
