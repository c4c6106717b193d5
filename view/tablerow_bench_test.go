package view

import (
	"testing"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
)

// benchLines are one cycle of generated lines, repeated.
func benchLines() [][]byte {
	lines := make([][]byte, 4*len(benchgen.Cycle))
	for i := range lines {
		lines[i] = []byte(benchgen.Line(i))
	}
	return lines
}

// BenchmarkDecodeLine is what --json decodes of each line.
func BenchmarkDecodeLine(b *testing.B) {
	lines := benchLines()
	var dec events.Decoder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := dec.ParseLine(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTableLine is what the table decodes of each line.
func BenchmarkDecodeTableLine(b *testing.B) {
	lines := benchLines()
	var dec events.Decoder
	p := &EventPrinter{Loc: benchgen.Start.Location()}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := p.decode(&dec, lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTableRow is BenchmarkDecodeTableLine and the row of
// each line: the difference is the row's cost.
func BenchmarkDecodeTableRow(b *testing.B) {
	lines := benchLines()
	var dec events.Decoder
	p := &EventPrinter{Loc: benchgen.Start.Location()}
	var row []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev, filled, err := p.decode(&dec, lines[i%len(lines)])
		if err != nil {
			b.Fatal(err)
		}
		row = p.appendDecodedRow(row[:0], ev, filled)
	}
}
