package config

import "strings"

// suggest is the candidate nearest to word by edit distance, or "" when
// none is close enough to be what the user meant. Ties go to the earlier
// candidate, so the answer does not depend on map order.
func suggest(word string, candidates []string) string {
	best, bestDist := "", maxSuggestDistance(word)+1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if d := levenshtein(lw, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// maxSuggestDistance allows more edits in longer words: one typo in a short
// word, about one in four characters in a long one.
func maxSuggestDistance(word string) int {
	return 1 + len(word)/4
}

// levenshtein is the number of single-character insertions, deletions and
// substitutions that turn a into b.
func levenshtein(a, b string) int {
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
