// Package suggest finds the "did you mean" answer for a name ralph does not
// know (a config key, a backend, a criterion type): the known name nearest
// to it by edit distance, when one is near enough to be what the user
// meant.
//
// It is a leaf that imports nothing of ralph's. events, which must stay a
// leaf too, does not use it.
package suggest

import "strings"

// Closest returns the candidate nearest to word by Levenshtein distance,
// compared case-insensitively, or "" when none is close enough.
//
// Close enough means at most 1 + len(word)/4 edits: one typo in a short
// word, about one in four characters in a long one ("promt" → "prompt",
// "max_iterashuns" → "max_iterations", but not "runtime" →
// "max_runtime_seconds"). An empty word gets no suggestion. Ties go to the
// earlier candidate, so with sorted candidates the answer does not depend
// on map order. The candidate is returned as given, not lower-cased.
func Closest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	best, bestDist := "", maxDistance(word)+1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if d := distance(lw, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// maxDistance is the most edits Closest accepts for word. It counts bytes,
// which for the ASCII names it serves are characters.
func maxDistance(word string) int {
	return 1 + len(word)/4
}

// distance is the Levenshtein distance between a and b in runes: the
// number of single-character insertions, deletions and substitutions that
// turn a into b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
