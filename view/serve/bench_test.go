package serve

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/runfiles"
)

// BenchmarkEventStreamCatchUp is what a client that connects to
// /api/events/stream of a long run costs: the log's lines, each sent as a
// Server-Sent Event, until the stream reaches the log's end. The figure to
// read is ns/event.
func BenchmarkEventStreamCatchUp(b *testing.B) {
	const lines = 100_000
	dir := b.TempDir()
	log := filepath.Join(dir, runfiles.DirName, "events-20261122-100000.jsonl")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := benchgen.WriteFile(log, lines); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(dir, testToken, false, nil))
	defer srv.Close()
	b.ResetTimer()
	for range b.N {
		if got := streamUntil(b, srv.URL+"/api/events/stream", lines); got != lines {
			b.Fatalf("got %d events, want %d", got, lines)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/event")
}

// streamUntil reads the stream at url until it has had n events, and
// returns how many it had.
func streamUntil(b *testing.B, url string, n int) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	got := 0
	for got < n && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: ") {
			got++
		}
	}
	return got
}
