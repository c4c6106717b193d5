package view

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
)

// FuzzDecodedRow holds the table's row for a line whose fields were
// filled while it was decoded to the row for the same line decoded alone,
// whose payload the row reads again: the same bytes, or the same error.
func FuzzDecodedRow(f *testing.F) {
	for i := range 2 * len(benchgen.Cycle) {
		f.Add([]byte(benchgen.Line(i)))
	}
	for _, s := range []string{
		`{"topic":"iteration.started","payload":{"iteration":2,"hat":"h","events":[1,2],"confirming":true,"backend":"b","topic":5},"source":"ralph"}`,
		`{"topic":"iteration.finished","payload":{"hat":"h","outcome":"failure","failure":"crash","message":"m","duration_ms":61000,"tokens":{"input_tokens":1500},"cost_usd":1e-5,"to":"x"},"source":"ralph"}`,
		`{"topic":"event.routed","payload":{"topic":"t","to":[],"as":"claim","events":"x"},"source":"ralph","hat":"own"}`,
		`{"topic":"event.routed","payload":{"topic":"t","to":["a","b"]},"payload":{"topic":"u"},"source":"ralph"}`,
		`{"topic":"event.routed","payload":{ "topic" : "t\u0041" },"source":"ralph"}`,
		`{"source":"ralph","payload":{"hat":"h"},"topic":"iteration.started"}`,
		`{"topic":"loop.started","payload":{"run_id":"r","objective":"o"},"source":"ralph"}`,
	} {
		f.Add([]byte(s))
	}
	filledPrinter := &EventPrinter{Loc: benchgen.Start.Location()}
	alonePrinter := &EventPrinter{Loc: benchgen.Start.Location()}
	var filledDec, aloneDec events.Decoder
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			t.Skip() // a log's line has none
		}
		ev, filled, err := filledPrinter.decode(&filledDec, line)
		want, wantErr := aloneDec.ParseLine(line)
		require.Equal(t, wantErr, err, "error for %q", line)
		if err != nil {
			return
		}
		got := string(filledPrinter.appendDecodedRow(nil, ev, filled))
		require.Equal(t, string(alonePrinter.appendRow(nil, want)), got, "row of %q (filled %v)", line, filled)
	})
}
