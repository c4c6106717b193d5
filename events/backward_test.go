package events_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

type rawLine struct {
	offset int64
	line   string
}

// forwardLines is what ScanLines gives, the reference for the backward read.
func forwardLines(t *testing.T, data []byte) []rawLine {
	var lines []rawLine
	require.NoError(t, events.ScanLines(bytes.NewReader(data), func(rec events.Record) error {
		lines = append(lines, rawLine{rec.Offset, string(rec.Line)})
		return nil
	}))
	return lines
}

func backwardLines(t *testing.T, data []byte, block int) ([]rawLine, int64) {
	b := events.NewBackwardScannerBlock(bytes.NewReader(data), int64(len(data)), block)
	var lines []rawLine
	for {
		rec, err := b.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		lines = append(lines, rawLine{rec.Offset, string(rec.Line)})
	}
	slices.Reverse(lines)
	return lines, b.End()
}

// The backward read gives the forward read's lines in reverse, whatever
// cuts the blocks make: CRLF, blank lines, a line longer than a block, a
// final line without its newline.
func TestBackwardScannerMatchesForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"\n", "\r\n", " \n", "\t\r\n", `{"topic":"a"}`, "x", strings.Repeat("long", 40), "é"}
	for round := range 300 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		data := []byte(b.String())
		want := forwardLines(t, data)
		for _, block := range []int{1, 2, 3, 7, 64, 1 << 16} {
			got, end := backwardLines(t, data, block)
			require.Equal(t, want, got, "round %d, block %d: %q", round, block, data)
			require.Equal(t, int64(bytes.LastIndexByte(data, '\n')+1), end, "End is past the last newline")
		}
	}
}
