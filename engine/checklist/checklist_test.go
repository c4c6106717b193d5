package checklist

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	spec := "# Spec\n\n- [x] Add the endpoint\n- [ ] Write tests\n  * [X] nested done\n1. [ ] numbered\n\n```md\n- [ ] an example, not a task\n```\n- [] not a box\n-[ ] not a box either\n"
	assert.Equal(t, []Item{
		{Index: 0, Text: "Add the endpoint", Done: true, Line: 3},
		{Index: 1, Text: "Write tests", Done: false, Line: 4},
		{Index: 2, Text: "nested done", Done: true, Line: 5},
		{Index: 3, Text: "numbered", Done: false, Line: 6},
	}, Parse([]byte(spec)))
	done, total := Counts(Parse([]byte(spec)))
	assert.Equal(t, 2, done)
	assert.Equal(t, 4, total)
}

func TestNewlyDone(t *testing.T) {
	before := Parse([]byte("- [x] a\n- [ ] b\n- [ ] c\n"))
	after := Parse([]byte("- [ ] new task\n- [x] a\n- [x] b\n- [ ] c\n"))
	got := NewlyDone(before, after)
	assert.Equal(t, []Item{{Index: 2, Text: "b", Done: true, Line: 3}}, got)
	assert.Empty(t, NewlyDone(after, after))
}
