package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMasked(t *testing.T) {
	t.Parallel()
	r := New([]string{"GH_TOKEN=ghp_0123456789abcdefghij", "DB_PASSWORD=correct-horse-battery"}, nil)
	s := r.String("Bearer ghp_0123456789abcdefghij and correct-horse-battery")
	assert.Equal(t, []string{"GH_TOKEN", "DB_PASSWORD"}, Masked(s))
	assert.Empty(t, Masked("nothing secret, [redacted: not a mask], [redacted:open"))
	assert.Equal(t, []string{"A"}, Masked("[redacted:[redacted:A]"))
}
