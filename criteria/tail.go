package criteria

import (
	"fmt"

	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/tail"
)

// outputTail is the kept tail of a command's output. When output was
// dropped it starts at a line and says how much is missing.
func outputTail(t *tail.Buffer) string {
	s, omitted := t.Lines()
	if omitted == 0 {
		return s
	}
	return fmt.Sprintf("[%s of output omitted]\n%s", plural.Count(omitted, "earlier byte", "earlier bytes"), s)
}
