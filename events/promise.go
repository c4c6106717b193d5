package events

import "strings"

// PromiseComplete is the completion sigil other loops' prompts teach
// agents to print: <promise>COMPLETE</promise>.
const PromiseComplete = "COMPLETE"

const (
	promiseOpen  = "<promise>"
	promiseClose = "</promise>"
	// maxPromiseLen bounds a promise's text: a sigil is a word, and a
	// longer run between the two tags is prose that mentions them.
	maxPromiseLen = 128
)

// Promises returns the texts of the <promise>TEXT</promise> sigils in
// text, in order, each trimmed, with the tags on one line. As with event
// tags, those inside fenced code blocks are examples and are skipped.
func Promises(text string) []string {
	var out []string
	var fence codeFence
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if inFence {
			inFence = !fence.closedBy(line)
			continue
		}
		if f, ok := parseFenceOpen(line); ok {
			fence, inFence = f, true
			continue
		}
		out = append(out, linePromises(line)...)
	}
	return out
}

func linePromises(line string) []string {
	var out []string
	for {
		i := strings.Index(line, promiseOpen)
		if i < 0 {
			return out
		}
		line = line[i+len(promiseOpen):]
		j := strings.Index(line, promiseClose)
		if j < 0 {
			return out
		}
		if p := strings.TrimSpace(line[:j]); p != "" && len(p) <= maxPromiseLen {
			out = append(out, p)
		}
		line = line[j+len(promiseClose):]
	}
}
