package pricing

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/suggest"
)

var (
	// contextSuffix is a context-window variant's suffix ("[1m]"), priced as
	// the model (Claude Code names claude-opus-4-8[1m] in its usage).
	contextSuffix = regexp.MustCompile(`\[[^\]]*\]$`)
	// dateSuffix is a dated snapshot's suffix: "-20251001", "-2025-10-01" or
	// Vertex AI's "@20251001".
	dateSuffix = regexp.MustCompile(`[-@](\d{8}|\d{4}-\d{2}-\d{2})$`)
)

// key is model with what Lookup ignores taken away: case, surrounding
// space, a provider prefix (all up to the last "/"), a context suffix, a
// dated suffix, and dots (spelled "-").
func key(model string) string {
	k := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(k, "/"); i >= 0 {
		k = k[i+1:]
	}
	k = contextSuffix.ReplaceAllString(k, "")
	k = dateSuffix.ReplaceAllString(k, "")
	// OpenRouter and pi write "claude-opus-4.8" where Anthropic writes "4-8".
	return strings.ReplaceAll(k, ".", "-")
}

// Nearest names at most n models of t that model may have meant, for the
// message about a model with no price: the one a typo away first, then
// those sharing the longest start with it ("claude-opus-4-9" →
// claude-opus-4-8, claude-opus-4-7, …), in table order. None share less
// than a family name's worth ("gpt-", "qwen").
func (t *Table) Nearest(model string, n int) []string {
	k := key(model)
	var out []string
	add := func(name string) {
		if name != "" && len(out) < n && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	add(suggest.Closest(model, t.Models()))
	best := 0
	for _, p := range t.rowsOrNil() {
		best = max(best, commonPrefix(k, key(p.Model)))
	}
	for length := best; length >= minShared; length-- {
		for _, p := range t.rowsOrNil() {
			if commonPrefix(k, key(p.Model)) == length {
				add(p.Model)
			}
		}
	}
	return out
}

// minShared is how long a start Nearest needs in common with a model.
const minShared = 4

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
