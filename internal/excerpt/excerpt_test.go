package excerpt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCutKeepsAShortTextWhole(t *testing.T) {
	for _, s := range []string{"", "one line", strings.Repeat("x", 100)} {
		head, tail, omitted := Cut(s, 100)
		assert.Equal(t, s, head)
		assert.Empty(t, tail)
		assert.Zero(t, omitted)
	}
}

func TestCutKeepsBothEndsWithinTheLimit(t *testing.T) {
	s := strings.Repeat("a", 1000) + strings.Repeat("m", 10000) + strings.Repeat("z", 1000)
	head, tail, omitted := Cut(s, 2000)
	assert.Equal(t, strings.Repeat("a", 1000), head)
	assert.Equal(t, strings.Repeat("z", 1000), tail)
	assert.Equal(t, 10000, omitted)
	assert.Equal(t, len(s), len(head)+omitted+len(tail))
}

func TestCutEndsAtLineBreaks(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", i%37) + "\n")
	}
	s := b.String()
	head, tail, omitted := Cut(s, 1000)
	assert.True(t, strings.HasSuffix(head, "\n"), "the head ends with a whole line")
	assert.True(t, strings.HasPrefix(s, head))
	assert.True(t, strings.HasSuffix(s, tail))
	assert.Equal(t, byte('\n'), s[len(s)-len(tail)-1], "the tail starts at a line")
	assert.LessOrEqual(t, len(head)+len(tail), 1000)
	assert.Greater(t, len(head)+len(tail), 500, "no more than half of each side is given up for a line break")
	assert.Equal(t, len(s), len(head)+omitted+len(tail))
}

func TestCutNeverSplitsARune(t *testing.T) {
	s := strings.Repeat("é", 1000) + strings.Repeat("→", 1000)
	for limit := 1; limit < 40; limit++ {
		head, tail, omitted := Cut(s, limit)
		assert.True(t, utf8.ValidString(head), "head at limit %d", limit)
		assert.True(t, utf8.ValidString(tail), "tail at limit %d", limit)
		assert.LessOrEqual(t, len(head)+len(tail), limit)
		assert.Equal(t, len(s), len(head)+omitted+len(tail))
	}
}
