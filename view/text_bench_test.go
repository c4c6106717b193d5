package view

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// BenchmarkTextActivity measures the console's line for a report of the
// agent's text, printed for each one within max_activity_bytes: a 100-byte
// line of text.
func BenchmarkTextActivity(b *testing.B) {
	r := NewText(io.Discard, nil, time.Now, Options{})
	a := events.Activity{Kind: events.ActivityText, Text: strings.Repeat("0123456789", 10)[:99]}
	b.ReportAllocs()
	for b.Loop() {
		r.Activity(engine.IterationInfo{}, a)
	}
}
