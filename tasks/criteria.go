package tasks

import (
	"regexp"
	"sort"
	"strings"
)

// bullet is a markdown list marker at the start of a trimmed line: "- ",
// "* ", "+ ", "1. " or "1) ".
var bullet = regexp.MustCompile(`^(?:[-*+]|\d+[.)])(?:\s+|$)`)

// checkbox is a task box after a list marker: "[ ] ", "[x] ", "[X] ".
var checkbox = regexp.MustCompile(`^\[[ xX]\](?:\s+|$)`)

// stripItem removes a list marker and a checkbox from a trimmed line, and
// reports whether there was a marker.
func stripItem(line string) (string, bool) {
	line = strings.TrimSpace(line)
	loc := bullet.FindStringIndex(line)
	if loc == nil {
		return line, false
	}
	line = line[loc[1]:]
	if loc := checkbox.FindStringIndex(line); loc != nil {
		line = line[loc[1]:]
	}
	return strings.TrimSpace(line), true
}

// criterionOf makes one criterion of one item's text, list marker and
// checkbox already stripped. It is the one place that decides what is a
// command: an item that is one code span (`go test ./...`, or “a `b` c“
// with a longer fence), or one that starts with "$ ".
func criterionOf(text string) Criterion {
	text = strings.TrimSpace(text)
	c := Criterion{Text: text}
	if cmd, ok := strings.CutPrefix(text, "$ "); ok {
		c.Command = strings.TrimSpace(cmd)
		return c
	}
	if cmd, ok := codeSpan(text); ok {
		c.Command = cmd
	}
	return c
}

// codeSpan reports whether s is exactly one code span, and returns its
// content: a run of backticks, text without such a run, the same run.
func codeSpan(s string) (string, bool) {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n == 0 || len(s) < 2*n+1 {
		return "", false
	}
	fence := s[:n]
	inner := s[n : len(s)-n]
	if !strings.HasSuffix(s, fence) || strings.HasSuffix(inner, "`") || strings.Contains(inner, fence) {
		return "", false
	}
	inner = strings.TrimSpace(inner)
	return inner, inner != ""
}

// parseCriteria splits a tracker's free-text acceptance criteria into
// items: each list item (-, *, +, 1.) is one, with its checkbox and marker
// stripped and the indented lines under it joined to it; a line that is
// not a list item is an item of its own. Blank lines, headings and fenced
// code blocks' fences are skipped; the lines inside a fence are items.
func parseCriteria(text string) []Criterion {
	var items []string
	last := -1 // index of the list item that indented lines continue
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") || strings.HasPrefix(line, "#") {
			if line != "" {
				last = -1
			}
			continue
		}
		item, isItem := stripItem(line)
		indented := raw != strings.TrimLeft(raw, " \t")
		switch {
		case isItem:
			if item == "" {
				continue
			}
			items = append(items, item)
			last = len(items) - 1
		case indented && last >= 0:
			items[last] += " " + line
		default:
			items = append(items, line)
			last = -1
		}
	}
	return criteriaOf(items)
}

// criteriaOf makes criteria of a list of items, as JSON trackers give them.
func criteriaOf(items []string) []Criterion {
	var out []Criterion
	for _, it := range items {
		it, _ = stripItem(it)
		if it == "" {
			continue
		}
		out = append(out, criterionOf(it))
	}
	return out
}

// byPriority sorts tasks by priority, keeping the order of ties.
func byPriority(ts []Task) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Priority < ts[j].Priority })
}
