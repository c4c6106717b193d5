// Package plural writes counts of things for people: "1 hat", "3 hats".
// ralph's messages are in English, where the word after a count depends on
// whether the count is one.
//
// It is a leaf that imports nothing of ralph's. events, which must stay a
// leaf too, does not use it.
package plural

import (
	"fmt"
	"strconv"
	"strings"
)

// Count returns n and the word for it: one when n is 1, many otherwise
// ("0 hats", "1 hat", "2 hats").
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// Word returns one when n is 1 and many otherwise, for phrases where the
// count is written elsewhere ("1 of 3 boxes is", "2 of 3 boxes are").
func Word(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}

// Tally lists the distinct items in the order they first appear, each
// followed by how many times it appears when that is more than once:
// [a a b a] is "a ×3, b".
func Tally(items []string) string {
	counts := map[string]int{}
	var order []string
	for _, it := range items {
		if counts[it] == 0 {
			order = append(order, it)
		}
		counts[it]++
	}
	parts := make([]string, len(order))
	for i, it := range order {
		parts[i] = it
		if n := counts[it]; n > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", it, n)
		}
	}
	return strings.Join(parts, ", ")
}
