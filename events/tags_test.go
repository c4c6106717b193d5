package events_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

func TestParseTags(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []events.Tag
	}{
		{
			name: "double quotes",
			text: `<event topic="build.done">tests: pass</event>`,
			want: []events.Tag{{Topic: "build.done", Payload: "tests: pass"}},
		},
		{
			name: "single quotes",
			text: `<event topic='build.done'>tests: pass</event>`,
			want: []events.Tag{{Topic: "build.done", Payload: "tests: pass"}},
		},
		{
			name: "target",
			text: `<event topic="review.approved" target="finalizer">ok</event>`,
			want: []events.Tag{{Topic: "review.approved", Target: "finalizer", Payload: "ok"}},
		},
		{
			name: "attributes in any order, mixed quotes",
			text: `<event target='finalizer' topic="review.approved">ok</event>`,
			want: []events.Tag{{Topic: "review.approved", Target: "finalizer", Payload: "ok"}},
		},
		{
			name: "whitespace around attributes and =",
			text: "<event   topic = \"a.b\"\n\ttarget =\t'h'  >x</event>",
			want: []events.Tag{{Topic: "a.b", Target: "h", Payload: "x"}},
		},
		{
			name: "whitespace inside values is trimmed",
			text: `<event topic=" a.b " target=" h ">x</event>`,
			want: []events.Tag{{Topic: "a.b", Target: "h", Payload: "x"}},
		},
		{
			name: "unknown attributes ignored",
			text: `<event id="7" topic="a" priority='high'>x</event>`,
			want: []events.Tag{{Topic: "a", Payload: "x"}},
		},
		{
			name: "first of a repeated attribute counts",
			text: `<event topic="first" topic="second">x</event>`,
			want: []events.Tag{{Topic: "first", Payload: "x"}},
		},
		{
			name: "quote of the other kind inside a value",
			text: `<event topic='say"hi"'>x</event>`,
			want: []events.Tag{{Topic: `say"hi"`, Payload: "x"}},
		},
		{
			name: "> inside a quoted value",
			text: `<event topic="a>b">x</event>`,
			want: []events.Tag{{Topic: "a>b", Payload: "x"}},
		},
		{
			name: "empty payload",
			text: `<event topic="LOOP_COMPLETE"></event>`,
			want: []events.Tag{{Topic: "LOOP_COMPLETE"}},
		},
		{
			name: "self-closing",
			text: `done <event topic="LOOP_COMPLETE"/> and <event topic='x' target="h" />`,
			want: []events.Tag{{Topic: "LOOP_COMPLETE"}, {Topic: "x", Target: "h"}},
		},
		{
			name: "payload on the tag line loses surrounding spaces",
			text: "<event topic=\"a\">  tests: pass  </event>",
			want: []events.Tag{{Topic: "a", Payload: "tests: pass"}},
		},
		{
			name: "multi-line payload kept whole",
			text: "<event topic=\"review.done\">\nFindings:\n\n- one\n  - nested\n\nend\n</event>",
			want: []events.Tag{{Topic: "review.done", Payload: "Findings:\n\n- one\n  - nested\n\nend"}},
		},
		{
			name: "block payload keeps first-line indentation, drops blank lines around",
			text: "<event topic=\"a\">  \n\n    code()\n  more\n\n\n</event>",
			want: []events.Tag{{Topic: "a", Payload: "    code()\n  more"}},
		},
		{
			name: "payload starting on tag line, continuing",
			text: "<event topic=\"a\">first\n  second\n</event>",
			want: []events.Tag{{Topic: "a", Payload: "first\n  second"}},
		},
		{
			name: "CRLF payload",
			text: "<event topic=\"a\">\r\nline1\r\nline2\r\n</event>",
			want: []events.Tag{{Topic: "a", Payload: "line1\r\nline2"}},
		},
		{
			name: "payload with markup is exact",
			text: `<event topic="a">if a < b && c > d { "q" }</event>`,
			want: []events.Tag{{Topic: "a", Payload: `if a < b && c > d { "q" }`}},
		},
		{
			name: "several tags in order",
			text: "text\n<event topic=\"one\">1</event>\nmore\n<event topic=\"two\">2</event><event topic=\"three\">3</event>",
			want: []events.Tag{{Topic: "one", Payload: "1"}, {Topic: "two", Payload: "2"}, {Topic: "three", Payload: "3"}},
		},
		{
			name: "adjacent to text",
			text: `Done.<event topic="build.done">ok</event>Bye.`,
			want: []events.Tag{{Topic: "build.done", Payload: "ok"}},
		},
		{
			name: "huge payload is not truncated",
			text: `<event topic="a">` + strings.Repeat("x", 1<<20) + `</event>`,
			want: []events.Tag{{Topic: "a", Payload: strings.Repeat("x", 1<<20)}},
		},
		{
			name: "no topic ignored",
			text: `<event target="h">x</event><event topic="">y</event><event topic="  ">z</event><event topic="ok">1</event>`,
			want: []events.Tag{{Topic: "ok", Payload: "1"}},
		},
		{
			name: "unterminated at end",
			text: `<event topic="a">never closed`,
			want: nil,
		},
		{
			name: "unterminated followed by a good tag",
			text: "<event topic=\"a\">forgot to close\n<event topic=\"b\">ok</event>",
			want: []events.Tag{{Topic: "b", Payload: "ok"}},
		},
		{
			name: "unterminated opening tag",
			text: `<event topic="a"`,
			want: nil,
		},
		{
			name: "unclosed quote",
			text: `<event topic="a>x</event>`,
			want: nil,
		},
		{
			name: "unquoted value",
			text: `<event topic=a>x</event>`,
			want: nil,
		},
		{
			name: "attribute without value",
			text: `<event topic="a" urgent>x</event>`,
			want: nil,
		},
		{
			name: "not an event tag",
			text: `<events topic="a">x</events><eventual topic="b">y</eventual><EVENT topic="c">z</EVENT>`,
			want: nil,
		},
		{
			name: "empty text",
			text: "",
			want: nil,
		},
		{
			name: "stray close tag",
			text: `</event> <event topic="a">x</event> </event>`,
			want: []events.Tag{{Topic: "a", Payload: "x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, events.ParseTags(tt.text))
		})
	}
}

func TestParseTagsFences(t *testing.T) {
	const real = `<event topic="real">yes</event>`
	want := []events.Tag{{Topic: "real", Payload: "yes"}}
	tests := []struct {
		name string
		text string
		want []events.Tag
	}{
		{
			name: "backtick fence",
			text: "Example:\n```\n<event topic=\"example\">no</event>\n```\n" + real,
			want: want,
		},
		{
			name: "tilde fence",
			text: "~~~\n<event topic=\"example\">no</event>\n~~~\n" + real,
			want: want,
		},
		{
			name: "info string",
			text: "```xml\n<event topic=\"example\">no</event>\n```\n" + real,
			want: want,
		},
		{
			name: "tilde info string may hold backticks",
			text: "~~~ `xml`\n<event topic=\"example\">no</event>\n~~~\n" + real,
			want: want,
		},
		{
			name: "indented fence in a list item",
			text: "1. Emit:\n    ```\n    <event topic=\"example\">no</event>\n    ```\n" + real,
			want: want,
		},
		{
			name: "longer fence is not closed by a shorter one",
			text: "````\n```\n<event topic=\"example\">no</event>\n```\n````\n" + real,
			want: want,
		},
		{
			name: "backtick fence is not closed by tildes",
			text: "```\n~~~\n<event topic=\"example\">no</event>\n~~~\n```\n" + real,
			want: want,
		},
		{
			name: "tilde fence is not closed by backticks",
			text: "~~~\n```\n<event topic=\"example\">no</event>\n```\n~~~\n" + real,
			want: want,
		},
		{
			name: "closing fence may be longer",
			text: "```\n<event topic=\"example\">no</event>\n`````\n" + real,
			want: want,
		},
		{
			name: "closing fence with text after it does not close",
			text: "```\n``` not a close\n<event topic=\"example\">no</event>\n```\n" + real,
			want: want,
		},
		{
			name: "closing fence with trailing spaces and CR closes",
			text: "```\r\n<event topic=\"example\">no</event>\r\n```  \r\n" + real,
			want: want,
		},
		{
			name: "unclosed fence hides the rest",
			text: real + "\n```\n<event topic=\"example\">no</event>\n",
			want: want,
		},
		{
			name: "two fenced blocks around a real tag",
			text: "```\n<event topic=\"e1\">no</event>\n```\n" + real + "\n~~~\n<event topic=\"e2\">no</event>\n~~~\n",
			want: want,
		},
		{
			name: "inline triple backticks are not a fence",
			text: "Use ```code``` here\n" + real,
			want: want,
		},
		{
			name: "two backticks are not a fence",
			text: "``\n" + real + "\n``",
			want: want,
		},
		{
			name: "fence after a tag on the same line is text",
			text: real + " ```\n<event topic=\"also\">real</event>",
			want: append(want, events.Tag{Topic: "also", Payload: "real"}),
		},
		{
			name: "payload may contain a fenced block",
			text: "<event topic=\"review.done\">\nFix:\n```go\nx := 1\n```\n</event>\n" + real,
			want: []events.Tag{{Topic: "review.done", Payload: "Fix:\n```go\nx := 1\n```"}, want[0]},
		},
		{
			name: "payload with an unclosed fence does not hide later tags",
			text: "<event topic=\"a\">\n```\n</event>\n" + real,
			want: []events.Tag{{Topic: "a", Payload: "```"}, want[0]},
		},
		{
			name: "fence inside an ignored topic-less tag does not open a block",
			text: "<event>\n```\n</event>\n" + real,
			want: want,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, events.ParseTags(tt.text))
		})
	}
}

func TestTagRender(t *testing.T) {
	tests := []struct {
		name string
		tag  events.Tag
		want string
	}{
		{"plain", events.Tag{Topic: "a.b", Payload: "x"}, `<event topic="a.b">x</event>`},
		{"target", events.Tag{Topic: "a", Target: "h", Payload: "x"}, `<event topic="a" target="h">x</event>`},
		{"empty payload", events.Tag{Topic: "a"}, `<event topic="a"></event>`},
		{"multi-line payload on its own lines", events.Tag{Topic: "a", Payload: "1\n2"}, "<event topic=\"a\">\n1\n2\n</event>"},
		{"indented payload on its own lines", events.Tag{Topic: "a", Payload: "  x"}, "<event topic=\"a\">\n  x\n</event>"},
		{"double quote in topic", events.Tag{Topic: `a"b`, Payload: "x"}, `<event topic='a"b'>x</event>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.tag.Render()
			assert.Equal(t, tt.want, got)
			assert.Equal(t, []events.Tag{tt.tag}, events.ParseTags(got), "round trip")
		})
	}
}

func TestTagEvent(t *testing.T) {
	assert.Equal(t,
		events.Event{Topic: "a", Target: "h", Source: events.SourceTag, Payload: []byte(`"x <y>"`)},
		events.Tag{Topic: "a", Target: "h", Payload: "x <y>"}.Event())
	assert.Nil(t, events.Tag{Topic: "a"}.Event().Payload, "no payload is null")
}
