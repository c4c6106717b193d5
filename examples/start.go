package examples

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// WriteList writes one line per preset, in listing order: its name and
// description, the default marked, as `ralph init --list` shows them.
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range Presets() {
		desc := p.Description
		if p.Name == DefaultPreset {
			desc += " [default]"
		}
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, desc)
	}
	return tw.Flush()
}

// PromptTemplate is what `ralph init` writes where the preset reads the
// objective from: ralph gives that file to every hat as the objective, so
// it says what belongs there.
const PromptTemplate = `# Task

Replace this text with what you want done: the change, where in the code it
belongs, and why. ralph gives this file to every hat as the objective.

## Done when

- the behaviour that shows it works (a test, or a command and its output)
- what must not change
`

// WritePromptTemplate writes the objective's template to path unless a
// file is there already, which holds the user's task and is kept; wrote
// says which happened.
func WritePromptTemplate(path string) (wrote bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.WriteString(PromptTemplate)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
