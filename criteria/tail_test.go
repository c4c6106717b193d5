package criteria

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/internal/tail"
)

func TestOutputTail(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"under the limit", 10, []string{"ab\n", "cd\n"}, "ab\ncd\n"},
		{"cut at a line", 10, []string{"first\nsecond\nthird\n"}, "[13 earlier bytes of output omitted]\nthird\n"},
		{"many small writes", 8, []string{"a\n", "b\n", "c\n", "d\n", "e\n", "f\n", "g\n"},
			"[6 earlier bytes of output omitted]\nd\ne\nf\ng\n"},
		{"cut just after a newline", 4, []string{"abc\ndef\n"}, "[4 earlier bytes of output omitted]\ndef\n"},
		{"one long line", 4, []string{"abcdefgh"}, "[4 earlier bytes of output omitted]\nefgh"},
		{"one byte cut", 4, []string{"abcde"}, "[1 earlier byte of output omitted]\nbcde"},
		{"partial character dropped", 4, []string{"xxxxé€"}, "[6 earlier bytes of output omitted]\n€"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tail.New(tc.limit)
			for _, w := range tc.writes {
				n, err := b.Write([]byte(w))
				assert.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.Equal(t, tc.want, outputTail(b))
		})
	}
}
