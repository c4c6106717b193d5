// Package events owns ralph's event vocabulary: the [Event] record, the
// append-only JSONL [Log] and its offset-tracking [Reader], topic patterns,
// the [Bus] that routes events to hats, and the parser for <event> tags in
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
// payload may be a JSON string, an object or null. Lines with only topic,
// payload and ts (as other Ralph implementations write them) are read too.
// A line counts only once it ends in a newline.
//
// # Tags
//
// An agent that cannot run `ralph emit` publishes by writing tags in its
// final text:
//
//	<event topic="review.approved" target="finalizer">all checks pass</event>
//
// Quotes may be single or double, attributes come in any order, and the
// payload may span lines. Tags inside fenced code blocks are examples and are
// ignored.
package events
