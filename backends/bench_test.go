package backends

import (
	"bytes"
	"testing"

	"github.com/ralph-loop/ralph/events"
)

// BenchmarkParsers runs each CLI's parser over its recorded stdout streams
// (stdoutFixtures), all of them per iteration; MB/s is the parser's
// throughput on real output.
func BenchmarkParsers(b *testing.B) {
	for _, cli := range fuzzCLIs() {
		b.Run(cli, func(b *testing.B) {
			parse := clis[cli].parse
			var streams [][]byte
			size := 0
			for _, data := range stdoutFixtures(b, cli) {
				streams = append(streams, data)
				size += len(data)
			}
			discard := func(events.Activity) {}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range streams {
					parse(bytes.NewReader(data), discard, fixedClock)
				}
			}
		})
	}
}
