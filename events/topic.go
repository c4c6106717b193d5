package events

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Wildcard is the pattern segment that matches any one topic segment; on its
// own it is the catch-all pattern that matches every topic.
const Wildcard = "*"

// MaxTopicLen bounds a topic's length in bytes. Topics are identifiers, and a
// bound keeps a runaway agent from writing a payload into the topic.
const MaxTopicLen = 256

// ErrInvalidTopic is matched (with errors.Is) by every error ValidateTopic and
// ValidatePattern return.
var ErrInvalidTopic = errors.New("invalid topic")

// TopicError says why a topic or pattern is rejected and how to fix it.
type TopicError struct {
	Topic   string // the rejected topic or pattern
	Pattern bool   // whether it was checked as a trigger pattern
	Problem string // what is wrong, e.g. `contains a space at byte 5`
	Hint    string // how to fix it, e.g. `write "build.done"`
}

func (e *TopicError) Error() string {
	kind := "topic"
	if e.Pattern {
		kind = "topic pattern"
	}
	msg := fmt.Sprintf("invalid %s %q: %s", kind, e.Topic, e.Problem)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrInvalidTopic) true.
func (e *TopicError) Is(target error) bool { return target == ErrInvalidTopic }

// ValidateTopic checks that topic can be published: non-empty, at most
// MaxTopicLen bytes, made of dot-separated non-empty segments of ASCII
// letters, digits and '_', '-', ':', '/'. Upper case is fine (LOOP_COMPLETE).
// The error is a *TopicError that says what is wrong and how to fix it.
func ValidateTopic(topic string) error {
	return validate(topic, false)
}

// ValidatePattern checks a trigger pattern: a topic in which any whole
// segment may be the wildcard "*" ("task.*", "*.done", or "*" alone).
func ValidatePattern(pattern string) error {
	return validate(pattern, true)
}

func validate(name string, pattern bool) error {
	problem, hint := topicProblem(name, pattern)
	if problem == "" {
		return nil
	}
	return &TopicError{Topic: name, Pattern: pattern, Problem: problem, Hint: hint}
}

// topicProblem says what is wrong with name and how to fix it, or returns
// empty strings if nothing is.
func topicProblem(name string, pattern bool) (problem, hint string) {
	if strings.TrimSpace(name) == "" {
		return "it is empty", `use a name such as "build.done"`
	}
	if len(name) > MaxTopicLen {
		return fmt.Sprintf("it is %d bytes long, more than %d", len(name), MaxTopicLen),
			"keep topics short; put details in the payload"
	}
	for i := range len(name) {
		if problem, hint := byteProblem(name, i, pattern); problem != "" {
			return problem, hint
		}
	}
	return segmentProblem(name, pattern)
}

// byteProblem rejects byte i of name unless it belongs to the topic charset.
// Each kind of mistake gets its own hint because each has a different
// likely cause.
func byteProblem(name string, i int, pattern bool) (problem, hint string) {
	c := name[i]
	switch {
	case isTopicByte(c):
		return "", ""
	case c == '*' && pattern:
		return "", "" // whole-segment use is checked by segmentProblem
	case c == '*':
		return fmt.Sprintf("contains the wildcard '*' at byte %d", i),
			"'*' belongs in trigger patterns; publish a concrete topic such as \"build.done\""
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return fmt.Sprintf("contains whitespace at byte %d", i),
			fmt.Sprintf("join words with '.', '_' or '-', e.g. %q", suggestTopic(name))
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("contains the control character %q at byte %d", c, i), "remove it"
	default:
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Sprintf("contains %q at byte %d", r, i),
			"use only ASCII letters, digits, '.', '_', '-', ':' and '/'"
	}
}

func isTopicByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("._-:/", c) >= 0
}

// segmentProblem rejects empty segments ("a..b", ".a", "a.") and, in
// patterns, '*' that is not a whole segment ("build*" is not a glob ralph
// knows).
func segmentProblem(name string, pattern bool) (problem, hint string) {
	for rest := name; ; {
		seg, tail, more := strings.Cut(rest, ".")
		if seg == "" {
			hint := `use a name such as "build.done"`
			if joined := joinNonEmpty(name); joined != "" {
				hint = fmt.Sprintf("write %q", joined)
			}
			return "has an empty segment (a leading, trailing or doubled '.')", hint
		}
		if pattern && seg != Wildcard && strings.Contains(seg, Wildcard) {
			return fmt.Sprintf("uses '*' inside the segment %q", seg),
				"'*' stands for one whole segment: write \"build.*\", not \"build*\""
		}
		if !more {
			return "", ""
		}
		rest = tail
	}
}

// suggestTopic turns "build done" into "build.done" for a hint.
func suggestTopic(name string) string {
	return strings.Join(strings.Fields(name), ".")
}

// joinNonEmpty turns ".a..b." into "a.b" for a hint.
func joinNonEmpty(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '.' }), ".")
}

// Match reports whether topic matches pattern. "*" matches every topic; a
// pattern without '*' matches only the identical topic; otherwise the pattern
// and the topic must have the same number of dot-separated segments, and
// each '*' segment matches exactly one non-empty segment ("task.*" matches
// "task.start" but neither "task" nor "task.a.b").
func Match(pattern, topic string) bool {
	if pattern == Wildcard || pattern == topic {
		return true
	}
	if !strings.Contains(pattern, Wildcard) {
		return false
	}
	return matchSegments(pattern, topic)
}

// matchSegments walks both strings segment by segment without allocating,
// since Match runs for every trigger of every hat on every event.
func matchSegments(pattern, topic string) bool {
	for {
		pseg, prest, pmore := strings.Cut(pattern, ".")
		tseg, trest, tmore := strings.Cut(topic, ".")
		if pseg == Wildcard {
			if tseg == "" {
				return false
			}
		} else if pseg != tseg {
			return false
		}
		if pmore != tmore {
			return false
		}
		if !pmore {
			return true
		}
		pattern, topic = prest, trest
	}
}

// Specific reports whether pattern names particular topics, as opposed to the
// catch-all "*" that only receives what no specific pattern takes.
func Specific(pattern string) bool { return pattern != Wildcard }
