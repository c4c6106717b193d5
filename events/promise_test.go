package events

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPromises(t *testing.T) {
	for text, want := range map[string][]string{
		"All done.\n<promise>COMPLETE</promise>\n":               {"COMPLETE"},
		"<promise> COMPLETE </promise> and <promise>X</promise>": {"COMPLETE", "X"},
		"```\n<promise>COMPLETE</promise>\n```\nnot yet":         nil,
		"print <promise>COMPLETE when done":                      nil,
		"<promise></promise>":                                    nil,
		"<promise>COMPLETE\n</promise>":                          nil,
	} {
		assert.Equal(t, want, Promises(text), text)
	}
}
