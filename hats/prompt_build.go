package hats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// BuildPrompt renders the prompt for one iteration as markdown. Sections come
// in a fixed order, and the optional ones are left out when empty:
//
//	# Objective
//	# Your role: <hat name>
//	# Events to handle
//	# Instructions
//	# What happened last iteration   (only with LastIteration)
//	# Scratchpad                     (only with Scratchpad)
//	# Memories                       (only with Memories)
//	# Publishing
//	# Waves                          (only for a hat whose topics go to a wave hat)
//
// A wave worker's prompt (Worker) has "# You are one worker of a wave"
// after its role, and no Waves section. Payloads are shown in fences longer than any backtick run inside them, so
// that a payload cannot break the prompt's structure. A payload, claim,
// objective or note too long for a prompt (see prompt_limits.go) is shown
// as its beginning and end, with its size and the ralph command that prints
// it in full: cutting it anywhere else would lose exactly the hand-off the
// previous hat wrote.
//
// With Confirming set the prompt is framed for a verifier instead: the claim
// replaces the events, fixed verification steps replace the hat's
// instructions, and the verifier is told to publish the completion topic if
// and only if the claim holds, and otherwise to publish nothing and say what
// is missing in its final message. It is not given a rejection topic:
// ReservedResumeTopic belongs to ralph, and any new topic could be taken by a
// catch-all "*" hat instead of reaching the coordinator. The absence of the
// completion topic is the rejection; the engine hands control back to the
// coordinator with the verifier's final message as LastIteration.
func BuildPrompt(in PromptInput) string {
	var p prompt
	p.section("Objective", objectiveText(in))
	if in.Confirming {
		p.confirming(in)
	} else {
		p.working(in)
	}
	return strings.TrimRight(p.String(), "\n") + "\n"
}

// prompt accumulates sections.
type prompt struct{ strings.Builder }

func (p *prompt) section(title, body string) {
	fmt.Fprintf(p, "# %s\n\n%s\n\n", title, strings.TrimSpace(body))
}

func (p *prompt) working(in PromptInput) {
	p.section("Your role: "+hatName(in.Hat), roleText(in.Hat))
	if in.Worker != nil {
		p.section("You are one worker of a wave", workerText(in))
	}
	p.section("Events to handle", eventsText(in))
	p.section("Instructions", orDefault(in.Hat.Instructions,
		"Handle the events above in the way that best moves the objective forward."))
	p.context(in, "")
	p.section("Publishing", publishingText(in))
	if len(in.WaveRoutes) > 0 && in.Worker == nil {
		p.section("Waves", waveDispatchText(in))
	}
}

func (p *prompt) confirming(in PromptInput) {
	p.section("Your role: Verifier",
		"A previous iteration claimed the objective is complete. You are a fresh agent checking that claim independently: trust nothing you have not seen for yourself.")
	p.section("The claim", claimText(in))
	p.section("Instructions", confirmInstructions)
	p.context(in, " by the iterations whose work you are checking; verify them, do not rely on them")
	p.section("Publishing", confirmPublishingText(in))
}

// context writes the optional sections that carry state between iterations.
// notesCaveat qualifies who wrote the scratchpad, for a verifier that must
// not take the notes on trust.
func (p *prompt) context(in PromptInput, notesCaveat string) {
	if strings.TrimSpace(in.LastIteration) != "" {
		p.section("What happened last iteration", noteText(in))
	}
	if strings.TrimSpace(in.Scratchpad) != "" {
		p.section("Scratchpad", fmt.Sprintf("Notes kept across iterations in `%s`%s:\n\n%s",
			in.ScratchpadPath, notesCaveat, fenced(in.Scratchpad, "markdown")))
	}
	if strings.TrimSpace(in.Memories) != "" {
		p.section("Memories", "Long-term memories from earlier runs:\n\n"+fenced(in.Memories, "markdown"))
	}
}

func hatName(h Hat) string { return orDefault(h.Name, h.ID) }

func roleText(h Hat) string {
	s := fmt.Sprintf("You are wearing the `%s` hat.", h.ID)
	if d := strings.TrimSpace(h.Description); d != "" {
		s += " " + d
	}
	return s
}

// objectiveText is the objective, cut to objectiveLimit.
func objectiveText(in PromptInput) string {
	text, note := cut(orDefault(in.Objective, "(no objective given)"), objectiveLimit, "The objective", objectiveCommand(in))
	if note == "" {
		return text
	}
	return note + "\n\n" + text
}

func eventsText(in PromptInput) string {
	evs := in.Events
	if len(evs) == 0 {
		return "None are pending. Continue the objective from where the workspace and the scratchpad leave it."
	}
	limit := payloadLimitFor(len(evs))
	var b, body strings.Builder
	anyCut := false
	for i, ev := range evs {
		fmt.Fprintf(&body, "\n## %d. `%s`%s\n\n", i+1, ev.Topic, fromText(ev))
		text, info := payloadText(ev)
		if text == "" {
			body.WriteString("(no payload)\n")
			continue
		}
		shown, note := cut(text, limit, "This payload", payloadCommand(in, i))
		if note != "" {
			anyCut = true
			body.WriteString(note + "\n\n")
		}
		body.WriteString(fenced(shown, info))
	}
	b.WriteString("Handle all of these, oldest first. ")
	if anyCut {
		b.WriteString("Each payload is shown in full, unless it is too long for this prompt: then it says so, and how to print all of it.\n")
	} else {
		b.WriteString("Each payload is shown in full.\n")
	}
	b.WriteString(body.String())
	return b.String()
}

// claimText is the claim a verifier checks, fenced and cut like a payload.
func claimText(in PromptInput) string {
	text, note := cut(orDefault(in.Claim, "(the claim carried no payload)"), payloadLimitFor(1), "The claim", claimCommand(in))
	if note == "" {
		return fenced(text, "text")
	}
	return note + "\n\n" + fenced(text, "text")
}

// noteText is what happened last iteration, cut to noteLimit.
func noteText(in PromptInput) string {
	text, note := cut(in.LastIteration, noteLimit, "This note", noteCommand(in))
	if note == "" {
		return text
	}
	return note + "\n\n" + text
}

// fromText names who published ev, if the log says.
func fromText(ev events.Event) string {
	switch {
	case ev.Hat != "":
		return fmt.Sprintf(" from `%s`", ev.Hat)
	case ev.Source == events.SourceRalph:
		return " from ralph"
	case ev.Source == events.SourceHuman:
		return " from a person"
	}
	return ""
}

// payloadText returns the payload as text and the fence info string for it.
// Object and array payloads are indented so that a hand-off written as JSON
// reads as easily as prose.
func payloadText(ev events.Event) (text, info string) {
	raw := bytes.TrimSpace(ev.Payload)
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") == nil {
			return out.String(), "json"
		}
	}
	return ev.PayloadText(), "text"
}

// fenced wraps s in a code fence one backtick longer than the longest run of
// backticks in s (at least three), so nothing in s can close it early.
func fenced(s, info string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fmt.Sprintf("%s%s\n%s\n%s\n", fence, info, strings.TrimRight(s, "\n"), fence)
}

func publishingText(in PromptInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each iteration is a fresh process that remembers nothing of this one. You hand off by publishing events; anything else the next iteration needs belongs in the workspace or in `%s`. "+
		"A lesson that should outlive this run (a pattern, a decision, a fix) can be saved with `%s memory add \"<what to remember>\" --type pattern|decision|fix|context`.\n\n",
		in.ScratchpadPath, emitCommand(in))
	b.WriteString(topicsText(in))
	fmt.Fprintf(&b, "\nTo publish, run:\n\n    %s emit <topic> \"<payload>\"\n\n", emitCommand(in))
	b.WriteString("If you cannot run commands, end your final message with one tag per event instead, outside any code block:\n\n    <event topic=\"<topic>\">payload</event>\n\n")
	b.WriteString("The payload is all the receiver is told: say what you did, what is left, and the evidence (the commands you ran and their results).\n\n")
	fmt.Fprintf(&b, "If you need a decision only a person can make, ask it and end your turn: `%s ask \"<question>\" [--option \"<choice>\"]…`. "+
		"ralph waits for the answer and gives it to your hat in the next iteration. Ask one question per iteration, and do not claim completion in the same one.\n\n", emitCommand(in))
	if c := completionText(in); c != "" {
		b.WriteString(c + "\n\n")
	}
	b.WriteString("Publish exactly the events that hand off your work, then stop. Do not go on to do the receiving hat's work yourself.")
	return b.String()
}

// topicsText lists the topics the hat may publish and who receives each.
func topicsText(in PromptInput) string {
	var b strings.Builder
	switch {
	case len(in.Hat.Publishes) > 0:
		b.WriteString("Publish only these topics:\n\n")
	case len(in.Routes) > 0:
		b.WriteString("You may publish any topic. These reach a hat:\n\n")
	default:
		return "You may publish any topic. No hat triggers on a specific topic yet, so the coordinator picks up whatever you publish.\n"
	}
	for _, r := range in.Routes {
		fmt.Fprintf(&b, "- `%s` → %s\n", r.Topic, receiversText(r, in.CompletionTopic))
	}
	return b.String()
}

func receiversText(r Route, completion string) string {
	switch {
	case len(r.Receivers) > 0:
		return strings.Join(r.Receivers, ", ")
	case r.Topic != "" && r.Topic == completion:
		return "ralph, which ends the run once the claim is verified"
	}
	return "nobody yet (the coordinator picks it up)"
}

// completionText says whether and when this hat may claim completion. A hat
// with a Publishes list that leaves the completion topic out is told not to
// publish it, so that completion is judged by a hat that sees the whole
// objective rather than by one that finished its part.
func completionText(in PromptInput) string {
	c := in.CompletionTopic
	if c == "" {
		return ""
	}
	if len(in.Hat.Publishes) > 0 && !slices.Contains(in.Hat.Publishes, c) {
		return fmt.Sprintf("`%s` ends the run and is not yours to publish: hand off with the topics above, even if you believe the objective is done.", c)
	}
	return fmt.Sprintf("`%s` ends the run. Publish it only when the entire objective is done and verified, not just your part: every requirement met, the build and the tests run by you and passing. Its payload says what was done and how you verified it.", c)
}

const confirmInstructions = `1. Read the objective again and list every requirement in it.
2. Check each requirement against the workspace yourself: read the files, run the build, the tests and any other check the objective implies.
3. Change nothing. This iteration only verifies; fixing is the next iteration's job.`

func confirmPublishingText(in PromptInput) string {
	c := orDefault(in.CompletionTopic, "<completion topic>")
	return fmt.Sprintf("If and only if every requirement is met and you verified it, publish `%[1]s` with what you checked and the results:\n\n"+
		"    %[2]s emit %[1]s \"<what you checked and the results>\"\n\n"+
		"If you cannot run commands, end your final message with this tag instead, outside any code block:\n\n"+
		"    <event topic=\"%[1]s\">what you checked and the results</event>\n\n"+
		"Otherwise publish nothing at all, and end your final message with what is missing or broken, concretely (the requirement, the file, the failing command and its output), so that the next iteration can fix it. Then stop.",
		c, emitCommand(in))
}

// emitCommand is the command the agent runs to publish, quoted for a POSIX
// shell when the path needs it.
func emitCommand(in PromptInput) string {
	cmd := orDefault(in.EmitCommand, "ralph")
	if strings.ContainsAny(cmd, " \t\n'\"$`\\;&|<>()*?[]#~") {
		return "'" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
	}
	return cmd
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
