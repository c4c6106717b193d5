package hats

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/excerpt"
)

// What one prompt shows of the texts ralph passes on from others: the
// objective, the pending events' payloads (or the claim a verifier checks)
// and the note on the last iteration. A text over its limit is shown as its
// beginning and end (internal/excerpt), with its size and the ralph command
// that prints all of it, so nothing is kept from the agent: it is only left
// out of the prompt, where it would be paid for on every turn.
//
// Why these sizes. A hand-off, an objective or a note is a few kilobytes; a
// payload of 150 KB is a pasted test log or file, some 40,000 tokens in
// every prompt that shows it, which the agent does better to search with
// the command. And the whole prompt must stay under what one command-line
// argument may hold, for the agent CLIs that take it as one (backends'
// maxArgPrompt, 100 KiB, under Linux's 128 KiB): 32 KiB of objective,
// 32 KiB of payloads and 8 KiB of note, with the scratchpad (16 KiB, cut by
// the engine), the memories (4,000 characters unless memories.budget says
// otherwise) and ralph's own text (about 4 KiB), come to under 100 KiB,
// unless more than 16 events are pending at once (each keeps at least
// minPayloadLimit) or the hat's own instructions are long.
const (
	objectiveLimit = 32 << 10
	// payloadsBudget is shared by all of one prompt's payloads: each gets
	// an equal part, but no more than payloadLimit and no less than
	// minPayloadLimit however many events are pending.
	payloadsBudget  = 32 << 10
	payloadLimit    = 16 << 10
	minPayloadLimit = 2 << 10
	noteLimit       = 8 << 10
)

// payloadLimitFor is what each of n payloads may show.
func payloadLimitFor(n int) int {
	return min(payloadLimit, max(minPayloadLimit, payloadsBudget/max(n, 1)))
}

// cut is text as a prompt shows it: whole within limit; otherwise its
// beginning and end around a line that says how much is left out, and a
// note saying that what (a noun phrase: "This payload") is too long to show
// whole and that command prints all of it. note is empty when text is whole.
func cut(text string, limit int, what, command string) (shown, note string) {
	head, tail, omitted := excerpt.Cut(text, limit)
	if omitted == 0 {
		return text, ""
	}
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	shown = fmt.Sprintf("%s[… %s left out here …]\n%s", head, byteCount(omitted), tail)
	note = fmt.Sprintf("%s is %s, too long to show whole: only its beginning and end are here. `%s` prints all of it.",
		what, byteCount(len(text)), command)
	return shown, note
}

// byteCount says n bytes with thousands separated, as "153,600 bytes".
func byteCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " byte"
	}
	return s + " bytes"
}

// payloadCommand is the command that prints the payload of in.Events[i] in
// full: by its offset in the run's log, which names exactly that line, when
// the caller gave it; else by its topic.
func payloadCommand(in PromptInput, i int) string {
	if i < len(in.EventOffsets) {
		return fmt.Sprintf("%s events --offset %d --payload", emitCommand(in), in.EventOffsets[i])
	}
	return fmt.Sprintf("%s events --topic %s --payload", emitCommand(in), in.Events[i].Topic)
}

// claimCommand prints the claim a verifier checks: the last event of the
// completion topic, since nothing but the verifier itself publishes that
// topic again before it reads the claim.
func claimCommand(in PromptInput) string {
	return fmt.Sprintf("%s events --topic %s --last 1 --payload", emitCommand(in), orDefault(in.CompletionTopic, "<completion topic>"))
}

// objectiveCommand prints the run's objective.
func objectiveCommand(in PromptInput) string { return emitCommand(in) + " status --objective" }

// noteCommand prints the last iteration.settled record, whose note is
// LastIteration.
func noteCommand(in PromptInput) string {
	return emitCommand(in) + " events --topic iteration.settled --last 1 --payload"
}
