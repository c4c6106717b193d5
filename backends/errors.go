package backends

import (
	"fmt"
	"strings"
)

// MissingBinaryError says an agent CLI cannot be run because its executable
// is not installed (or Options.Command names nothing executable). It is a
// configuration problem: retrying does not help.
type MissingBinaryError struct {
	Backend string // the backend name, e.g. "claude"
	Binary  string // what was looked up: a name on PATH or a path
	Install string // how to get it, for the user
	Err     error  // the lookup error, if any
}

func (e *MissingBinaryError) Error() string {
	msg := fmt.Sprintf("%s backend: executable %q not found", e.Backend, e.Binary)
	if e.Install != "" {
		msg += "; " + e.Install
	}
	return msg
}

func (e *MissingBinaryError) Unwrap() error { return e.Err }

// UnknownBackendError says a backend name is not one ralph knows.
type UnknownBackendError struct {
	Name       string
	Known      []string // every accepted name, sorted
	Suggestion string   // the closest known name, empty if none is close
}

func (e *UnknownBackendError) Error() string {
	var b strings.Builder
	if e.Name == "" {
		b.WriteString("no backend named")
	} else {
		fmt.Fprintf(&b, "unknown backend %q", e.Name)
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", e.Suggestion)
	}
	fmt.Fprintf(&b, "; known backends: %s", strings.Join(e.Known, ", "))
	return b.String()
}

// closest returns the candidate nearest to name by edit distance, or "" when
// none is within a third of the name's length (at least 1 edit), so that a
// wild guess gets no suggestion.
func closest(name string, candidates []string) string {
	best, bestDist := "", len(name)/3+1
	for _, c := range candidates {
		if d := editDistance(name, c); d <= bestDist && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
