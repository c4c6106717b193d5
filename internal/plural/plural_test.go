package plural

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	cases := []struct {
		n    int
		want string
	}{
		{0, "0 hats"},
		{1, "1 hat"},
		{2, "2 hats"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Count(tc.n, "hat", "hats"))
	}
	assert.Equal(t, "1 memory", Count(1, "memory", "memories"))
	assert.Equal(t, "are", Word(3, "is", "are"))
	assert.Equal(t, "is", Word(1, "is", "are"))
}

func TestTally(t *testing.T) {
	cases := []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"ralph"}, "ralph"},
		{[]string{"ralph", "ralph", "ralph"}, "ralph ×3"},
		{[]string{"builder", "reviewer", "builder"}, "builder ×2, reviewer"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Tally(tc.items), "%v", tc.items)
	}
}
