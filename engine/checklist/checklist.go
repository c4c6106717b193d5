// Package checklist reads the task boxes of a markdown spec (SPEC.md mode):
// "- [ ] task" is open, "- [x] task" is done. Which boxes an iteration
// checked is the progress of a SPEC-mode run.
package checklist

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Item is one box.
type Item struct {
	Index int    `json:"index"` // 0-based, in file order
	Text  string `json:"text"`
	Done  bool   `json:"done"`
	Line  int    `json:"line"`
}

// box matches a list item with a checkbox: -, * or + or "1." bullets,
// any indentation, [ ], [x] or [X].
var box = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s+(.*?)\s*$`)

// Parse returns the boxes of a markdown text, skipping fenced code blocks,
// where a box is an example.
func Parse(data []byte) []Item {
	var items []Item
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		// A line may end in more than the one \r the scanner drops (a
		// CRLF file saved again with CRLF); none of them is text.
		text := strings.TrimRight(sc.Text(), "\r")
		if f := fenceOf(text); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if m := box.FindStringSubmatch(text); m != nil {
			items = append(items, Item{Index: len(items), Text: m[2], Done: m[1] != " ", Line: line})
		}
	}
	return items
}

func fenceOf(line string) string {
	t := strings.TrimLeft(line, " \t")
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, c) {
			n := len(t) - len(strings.TrimLeft(t, c[:1]))
			return t[:n]
		}
	}
	return ""
}

// Read parses the spec at path.
func Read(path string) ([]Item, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	return Parse(data), nil
}

// Counts returns how many boxes are done and how many there are.
func Counts(items []Item) (done, total int) {
	for _, it := range items {
		if it.Done {
			done++
		}
	}
	return done, len(items)
}

// NewlyDone lists the boxes done in after that were not done in before,
// matched by text so that an agent inserting or reordering tasks does not
// count as progress by itself.
func NewlyDone(before, after []Item) []Item {
	wasDone := map[string]int{}
	for _, it := range before {
		if it.Done {
			wasDone[it.Text]++
		}
	}
	var out []Item
	for _, it := range after {
		if !it.Done {
			continue
		}
		if wasDone[it.Text] > 0 {
			wasDone[it.Text]--
			continue
		}
		out = append(out, it)
	}
	return out
}
