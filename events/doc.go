// Package events owns ralph's event vocabulary: the [Event] record, the
// append-only JSONL [Log] and its offset-tracking [Reader], topic patterns,
// the [Router] that routes events to hats, and the parser for <event> tags in
// an agent's final text. It also defines the normalized agent activity
// ([Activity], [AgentResult]) that backends produce and the engine consumes.
// It imports nothing of ralph's.
//
// # The record
//
// One event is one JSON object on one line, ending in a newline:
//
//	{"ts":"2026-11-22T10:00:00.123456789Z","topic":"build.done","payload":"tests: pass","iteration":3,"hat":"builder","source":"agent"}
//
// payload may be any JSON value: usually a string, an object or null. The
// events of a wave (`ralph wave emit`, and what its workers publish) also
// carry wave_id, wave_index and wave_total ([Wave]). Lines
// with only topic, payload and ts (as other Ralph implementations write them)
// are read too; ts may be missing or in any RFC 3339 form, and a ts that does
// not parse leaves [Event.TS] zero rather than failing the line. Unknown keys
// are ignored.
//
// [Log.Append] writes each line with a single write(2) on an O_APPEND file,
// so several processes may append at once without interleaving. It refuses
// a topic that fails [ValidateTopic] in ralph's own lines, but records an
// event an agent published whatever its topic ([Event.Published]): that is
// what the agent said, and ralph rejects it when it reads the line back.
// [EncodeLine] gives the exact bytes.
//
// # Reading
//
// A line counts only once it ends in a newline. [Reader.Read] returns the
// complete lines after its offset as [Record] values and leaves a partial
// final line for a later Read; [Scan] streams a whole log in constant
// memory. Lines may be of any length. Blank lines are skipped. Any other line
// that is not a JSON object with a non-empty "topic" comes back as a Record
// whose Err matches [ErrMalformed]: that is data to count, not a read error.
//
// A reader that judges lines by their bytes before decoding them uses
// [ScanLines] (the lines, borrowed, undecoded) and [ParseLine] or a
// [Decoder]; [BackwardScanner] reads a log from its end, for its last lines.
// ParseLine decodes the usual line with a hand-written decoder and falls
// back to encoding/json for anything it is not sure of, so the two agree
// on every input (FuzzDecodeFast) and errors come from encoding/json.
//
// # Topics and patterns
//
// A topic is dot-separated segments of ASCII letters, digits and '_', '-',
// ':', '/' ("build.done", "LOOP_COMPLETE"). A trigger pattern may use "*" as
// a whole segment, matching exactly one segment: "task.*" matches
// "task.start" but not "task" or "task.a.b"; "*.done" matches "build.done".
// The pattern "*" alone matches everything, but the [Router] gives a "*"
// subscriber only the events no specific pattern takes. An event with a
// Target that names a known hat goes to that hat alone.
//
// # Tags
//
// An agent that cannot run `ralph emit` publishes by writing tags in its
// final text:
//
//	<event topic="review.approved" target="finalizer">all checks pass</event>
//
// Quotes may be single or double, attributes come in any order with any
// whitespace around them, unknown attributes are ignored, and <event
// topic="x"/> is a tag with an empty payload. The payload is everything up
// to the first </event>, kept exactly except at its edges: text on the
// opening tag's line loses its leading whitespace; if that line is otherwise
// empty, the payload starts at the next non-blank line with its indentation
// kept; trailing whitespace and blank lines are dropped. [ParseTags] returns
// tags in order and ignores:
//   - tags inside fenced code blocks (``` or ~~~, closed by a fence of the
//     same character at least as long, or by the end of the text): they are
//     examples;
//   - tags without a topic, and tags with no </event> before the next
//     opening tag or the end of the text (unterminated);
//   - anything that is not a well-formed tag (an unquoted value, <events>).
//
// Topics and targets in tags are not validated here; the caller checks them
// with [ValidateTopic] and [Router.HasHat] (ralph does when it reads the
// appended event back, and rejects a bad one as it would any agent's line).
// [Tag.Event] makes the event to append; [Tag.Render] writes the canonical
// form, which ParseTags reads back unchanged.
package events
