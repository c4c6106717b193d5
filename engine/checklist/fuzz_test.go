package checklist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse checks Parse on any spec: items are numbered and placed on the
// lines they come from, the same spec with CRLF line endings or a line
// more at the top reads the same, and checking (or unchecking) one box
// changes that box alone and counts as exactly that box's progress.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../*.md", "../../hats/testdata/prompts/*.golden"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(data)
		}
	}
	for _, s := range []string{
		"# Spec\n\n- [x] Add the endpoint\n- [ ] Write tests\n  * [X] nested done\n1. [ ] numbered\n\n```md\n- [ ] an example, not a task\n```\n- [] not a box\n-[ ] not a box either\n",
		"~~~~\n- [ ] in a fence\n~~~\n- [ ] still in it\n~~~~~\n+ [ ] out\r\n2) [x] done  \r\n",
		"- [ ] same\n- [x] same\n- [ ] same",
		"\t-\t[ ]\ttabs\n\f- [ ] form feed\v\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, spec []byte) {
		items := Parse(spec)
		lines := bytes.Split(spec, []byte("\n"))
		prevLine := 0
		for i, it := range items {
			require.Equal(t, i, it.Index, "items are numbered in file order")
			require.Greater(t, it.Line, prevLine, "one item per line, in order")
			require.LessOrEqual(t, it.Line, len(lines), "item %d is on a line of the spec", i)
			prevLine = it.Line
			require.Equal(t, strings.Trim(it.Text, " \t\r\n\f"), it.Text, "a task's text is trimmed, so that re-indenting it is no progress")
		}

		crlf := bytes.ReplaceAll(spec, []byte("\n"), []byte("\r\n"))
		require.Equal(t, items, Parse(crlf), "CRLF line endings read the same")

		shifted := Parse(append([]byte("# Title\n"), spec...))
		require.Len(t, shifted, len(items), "a heading on top changes no box")
		for i := range shifted {
			shifted[i].Line--
		}
		require.Equal(t, items, shifted, "a heading on top moves every box one line down")

		for i, it := range items[:min(len(items), 16)] {
			flipped := flipBox(t, spec, lines, it)
			want := append([]Item(nil), items...)
			want[i].Done = !it.Done
			got := Parse(flipped)
			require.Equal(t, want, got, "flipping box %d (line %d) changes it alone", i, it.Line)

			before, after := items, got
			if it.Done {
				before, after = got, items
			}
			newly := NewlyDone(before, after)
			require.Len(t, newly, 1, "checking box %d is one box of progress", i)
			require.Equal(t, it.Text, newly[0].Text)
			require.True(t, newly[0].Done)
		}
	})
}

// flipBox returns spec with it's box checked if it was open and open if it
// was checked, written the way an agent edits a spec: the one character
// between the brackets replaced.
func flipBox(t *testing.T, spec []byte, lines [][]byte, it Item) []byte {
	t.Helper()
	at := 0
	for _, l := range lines[:it.Line-1] {
		at += len(l) + 1
	}
	// Nothing before the box ('-', '*', '+', digits, '.', ')', blanks)
	// is a '[', so the line's first one opens the box.
	open := bytes.IndexByte(lines[it.Line-1], '[')
	require.GreaterOrEqual(t, open, 0, "line %d holds a box", it.Line)
	at += open + 1
	out := bytes.Clone(spec)
	switch c := out[at]; {
	case c == ' ' && !it.Done:
		out[at] = 'x'
	case (c == 'x' || c == 'X') && it.Done:
		out[at] = ' '
	default:
		t.Fatalf("line %d: box holds %q, but the item says done=%v", it.Line, c, it.Done)
	}
	return out
}
