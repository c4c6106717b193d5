//go:build unix

package serve

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/runfiles"
)

// fanoutClients is how many clients BenchmarkSSEFanout200 has follow one
// log: a team's pages on one busy run.
const fanoutClients = 200

// clientsEnv, set, makes this test binary the clients of
// BenchmarkSSEFanout200 rather than run tests: the URL of the stream and
// how many clients to open on it. They run in a process of their own so
// that the benchmark's CPU and memory are the server's alone.
const clientsEnv = "RALPH_SSE_FANOUT_CLIENTS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(clientsEnv); spec != "" {
		if err := runFanoutClients(spec); err != nil {
			fmt.Fprintln(os.Stderr, "clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkSSEFanout200 is what `ralph serve` spends on 200 clients that
// stream one growing log (/api/events/stream): each op appends one line
// and waits until every client has had it as an event. Its figures:
// cpu-µs/line, the server's CPU (user and system) per appended line, all
// 200 sends included; KiB/client, the server's heap and stacks per open
// stream; inotify, the kernel watchers the server holds for them all.
func BenchmarkSSEFanout200(b *testing.B) {
	dir := b.TempDir()
	log := filepath.Join(dir, runfiles.DirName, "events-20261128-100000.jsonl")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		b.Fatal(err)
	}
	const initial = 100
	if _, err := benchgen.WriteFile(log, initial); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(dir, testToken, false, nil)
	// Every client is on loopback, one address: room for them all there.
	h.streams = newStreamLimit(4 * fanoutClients)
	srv := httptest.NewServer(h)
	// A cleanup, so that it runs after the clients' process is gone and
	// their streams with it.
	b.Cleanup(srv.Close)

	before := heapAndStacks()
	clients := startFanoutClients(b, srv.URL+"/api/events/stream")
	clients.await(b, initial)
	perClient := float64(heapAndStacks()-before) / fanoutClients / 1024
	watchers := inotifyCount()

	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cpu := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.WriteString(benchgen.Line(initial+i) + "\n"); err != nil {
			b.Fatal(err)
		}
		clients.await(b, initial+i+1)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/line")
	b.ReportMetric(perClient, "KiB/client")
	b.ReportMetric(float64(watchers), "inotify")
}

// fanoutClients is the process of the clients: it says on its stdout each
// count of events that every one of its clients has had.
type fanoutProcess struct {
	cmd *exec.Cmd
	out *bufio.Scanner
}

func startFanoutClients(b *testing.B, url string) *fanoutProcess {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), clientsEnv+"="+strconv.Itoa(fanoutClients)+" "+url)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &fanoutProcess{cmd: cmd, out: bufio.NewScanner(stdout)}
}

// await waits until every client has had n events.
func (p *fanoutProcess) await(b *testing.B, n int) {
	b.Helper()
	for p.out.Scan() {
		if got, _ := strconv.Atoi(p.out.Text()); got >= n {
			return
		}
	}
	b.Fatalf("the clients ended before each had %d events: %v", n, p.out.Err())
}

// runFanoutClients opens the clients spec names ("N URL") and prints each
// count of events all of them have had, until stdin's reader goes.
func runFanoutClients(spec string) error {
	n, url, ok := strings.Cut(spec, " ")
	if !ok {
		return fmt.Errorf("%s=%q: want N URL", clientsEnv, spec)
	}
	clients, err := strconv.Atoi(n)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	reached := map[int]int{} // events had → clients that had them
	out := bufio.NewWriter(os.Stdout)
	had := func(count int) {
		mu.Lock()
		defer mu.Unlock()
		if reached[count]++; reached[count] == clients {
			delete(reached, count)
			fmt.Fprintln(out, count)
			_ = out.Flush()
		}
	}
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr}
	errs := make(chan error, clients)
	for range clients {
		go func() { errs <- readStream(client, url, had) }()
	}
	return <-errs
}

// readStream counts the events of the stream at url, telling had each new
// count.
func readStream(client *http.Client, url string, had func(int)) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	count := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: ") {
			count++
			had(count)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("the stream ended after %d events: %w", count, err)
	}
	return fmt.Errorf("the stream ended after %d events", count)
}

// heapAndStacks is what the process holds in its heap and goroutine
// stacks, after a collection.
func heapAndStacks() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// cpuTime is the CPU, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// inotifyCount is how many inotify instances the process holds; 0 where
// there is no /proc.
func inotifyCount() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}
