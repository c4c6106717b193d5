package tail

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLines(t *testing.T) {
	cases := []struct {
		name    string
		limit   int
		writes  []string
		want    string
		omitted int
	}{
		{"under the limit", 10, []string{"ab\n", "cd\n"}, "ab\ncd\n", 0},
		{"cut at a line", 10, []string{"first\nsecond\nthird\n"}, "third\n", 13},
		{"many small writes", 8, []string{"a\n", "b\n", "c\n", "d\n", "e\n", "f\n", "g\n"}, "d\ne\nf\ng\n", 6},
		{"cut just after a newline", 4, []string{"abc\ndef\n"}, "def\n", 4},
		{"one long line", 4, []string{"abcdefgh"}, "efgh", 4},
		{"one byte cut", 4, []string{"abcde"}, "bcde", 1},
		{"partial character dropped", 4, []string{"xxxxé€"}, "€", 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.limit)
			for _, w := range tc.writes {
				n, err := b.Write([]byte(w))
				assert.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			got, omitted := b.Lines()
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.omitted, omitted)
		})
	}
}

func TestStringIsTheLastBytes(t *testing.T) {
	b := New(100)
	_, _ = b.Write(bytes.Repeat([]byte("a"), 300))
	_, _ = b.Write([]byte("the end"))
	s := b.String()
	assert.Len(t, s, 100)
	assert.True(t, strings.HasSuffix(s, "the end"))

	short := New(100)
	_, _ = short.Write([]byte("ab"))
	assert.Equal(t, "ab", short.String())
}

func TestStaysBounded(t *testing.T) {
	b := New(100)
	for range 1000 {
		_, _ = b.Write([]byte(strings.Repeat("x", 37) + "\n"))
	}
	assert.LessOrEqual(t, len(b.buf), 2*100+38)
}
