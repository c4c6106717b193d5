package events_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		topic   string
		want    bool
	}{
		{"catch-all matches anything", "*", "build.done", true},
		{"catch-all matches one segment", "*", "LOOP_COMPLETE", true},
		{"catch-all matches empty topic", "*", "", true},
		{"exact", "build.done", "build.done", true},
		{"exact differs", "build.done", "build.failed", false},
		{"exact is not a prefix match", "build", "build.done", false},
		{"exact is case-sensitive", "Build.done", "build.done", false},
		{"trailing wildcard", "task.*", "task.start", true},
		{"trailing wildcard needs a segment", "task.*", "task", false},
		{"trailing wildcard is one segment", "task.*", "task.a.b", false},
		{"trailing wildcard other prefix", "task.*", "tasks.start", false},
		{"trailing wildcard empty segment", "task.*", "task.", false},
		{"leading wildcard", "*.done", "build.done", true},
		{"leading wildcard other suffix", "*.done", "build.failed", false},
		{"leading wildcard is one segment", "*.done", "a.build.done", false},
		{"leading wildcard needs a segment", "*.done", "done", false},
		{"middle wildcard", "review.*.done", "review.code.done", true},
		{"middle wildcard two segments", "review.*.done", "review.a.b.done", false},
		{"two wildcards", "*.*", "build.done", true},
		{"two wildcards one segment", "*.*", "build", false},
		{"multi-segment exact", "a.b.c", "a.b.c", true},
		{"multi-segment wildcard last", "a.b.*", "a.b.c", true},
		{"wildcard inside a segment is literal", "build*", "builds", false},
		{"wildcard inside a segment matches itself", "build*", "build*", true},
		{"empty pattern", "", "build.done", false},
		{"empty pattern empty topic", "", "", true},
		{"empty topic", "task.*", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, events.Match(tt.pattern, tt.topic))
		})
	}
}

func TestSpecific(t *testing.T) {
	assert.False(t, events.Specific("*"))
	for _, p := range []string{"task.*", "*.done", "*.*", "build.done", ""} {
		assert.True(t, events.Specific(p), p)
	}
}

func TestValidateTopic(t *testing.T) {
	tests := []struct {
		name    string
		topic   string
		wantErr string // substring; empty means valid
	}{
		{"dotted", "build.done", ""},
		{"upper case", "LOOP_COMPLETE", ""},
		{"digits and dashes", "step-2.done", ""},
		{"colon and slash", "ci:lint/go", ""},
		{"single segment", "x", ""},
		{"max length", strings.Repeat("a", events.MaxTopicLen), ""},
		{"empty", "", "it is empty"},
		{"blank", "   ", "it is empty"},
		{"space", "build done", `contains whitespace at byte 5 (join words with '.', '_' or '-', e.g. "build.done")`},
		{"tab", "build\tdone", "contains whitespace at byte 5"},
		{"newline", "build\n", "contains whitespace at byte 5"},
		{"control char", "build\x01", `contains the control character '\x01' at byte 5`},
		{"wildcard", "task.*", "contains the wildcard '*' at byte 5"},
		{"quote", `say"hi"`, `contains '"' at byte 3`},
		{"non-ASCII letter", "café", `contains 'é' at byte 3`},
		{"leading dot", ".build", `has an empty segment (a leading, trailing or doubled '.') (write "build")`},
		{"trailing dot", "build.", "has an empty segment"},
		{"double dot", "build..done", `write "build.done"`},
		{"only dots", "..", `has an empty segment (a leading, trailing or doubled '.') (use a name such as "build.done")`},
		{"too long", strings.Repeat("a", events.MaxTopicLen+1), "more than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := events.ValidateTopic(tt.topic)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, events.ErrInvalidTopic)
			assert.Contains(t, err.Error(), tt.wantErr)
			var te *events.TopicError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tt.topic, te.Topic)
			assert.NotEmpty(t, te.Hint, "every rejection says how to fix it")
		})
	}
}

func TestValidatePattern(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		wantErr string
	}{
		{"catch-all", "*", ""},
		{"trailing wildcard", "task.*", ""},
		{"leading wildcard", "*.done", ""},
		{"all wildcards", "*.*", ""},
		{"plain topic", "build.done", ""},
		{"partial-segment glob", "build*", `uses '*' inside the segment "build*"`},
		{"double star", "task.**", `uses '*' inside the segment "**"`},
		{"empty segment", "task.", "has an empty segment"},
		{"space", "task .*", "contains whitespace"},
		{"empty", "", "it is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := events.ValidatePattern(tt.pattern)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, events.ErrInvalidTopic)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Contains(t, err.Error(), "invalid topic pattern")
		})
	}
}
