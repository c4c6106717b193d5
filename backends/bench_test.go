package backends

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
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
					parse(bytes.NewReader(data), discard, fixedEnv)
				}
			}
		})
	}
}

// The BenchmarkParse<CLI> benchmarks run a CLI's parser, as a run calls it
// (clis[cli].parse on an io.Reader), over a stream of about
// largeStreamSize bytes grown from its recorded tool loop
// (largeStream), so that MB/s is the parser's throughput on a long session
// with real line shapes rather than on a few small recordings.

func BenchmarkParseClaude(b *testing.B)   { benchLargeStream(b, "claude") }
func BenchmarkParseCodex(b *testing.B)    { benchLargeStream(b, "codex") }
func BenchmarkParseGemini(b *testing.B)   { benchLargeStream(b, "gemini") }
func BenchmarkParseOpenCode(b *testing.B) { benchLargeStream(b, "opencode") }
func BenchmarkParsePi(b *testing.B)       { benchLargeStream(b, "pi") }
func BenchmarkParseQwen(b *testing.B)     { benchLargeStream(b, "qwen") }
func BenchmarkParseCopilot(b *testing.B)  { benchLargeStream(b, "copilot") }

// largeStreamSize is big enough that the stream is far larger than any
// buffer or cache the parser has.
const largeStreamSize = 24 << 20

func benchLargeStream(b *testing.B, cli string) {
	data := largeStream(b, cli)
	parse := clis[cli].parse
	discard := func(events.Activity) {}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		parse(bytes.NewReader(data), discard, fixedEnv)
	}
}

// largeStream repeats cli's recorded tool loop until it holds
// largeStreamSize bytes. Each repetition is a new session: every id gets
// the repetition's number, so tool uses are counted again rather than taken
// for repeats, and every string with a space or a newline in it (assistant
// text, commands, tool input and output) grows by filler of a size drawn
// from a fixed seed, because real sessions read and write whole files. The
// stream is the same on every run.
func largeStream(tb testing.TB, cli string) []byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", cli, "*-tool-loop.jsonl"))
	require.NoError(tb, err)
	require.Len(tb, paths, 1, "one recorded tool loop for %s", cli)
	recorded, err := os.ReadFile(paths[0])
	require.NoError(tb, err)
	g := &streamGrower{rng: rand.New(rand.NewPCG(1, 2))}
	var out bytes.Buffer
	for g.rep = 0; out.Len() < largeStreamSize; g.rep++ {
		for line := range bytes.Lines(recorded) {
			require.NoError(tb, g.line(&out, line))
		}
	}
	return out.Bytes()
}

// streamGrower rewrites recorded lines for largeStream, keeping their keys
// in order.
type streamGrower struct {
	rng *rand.Rand
	rep int
}

func (g *streamGrower) line(out *bytes.Buffer, line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := g.value(out, dec, ""); err != nil {
		return err
	}
	out.WriteByte('\n')
	return nil
}

// value copies the next JSON value of dec to out; key is the object key
// it is found under, inherited by array elements.
func (g *streamGrower) value(out *bytes.Buffer, dec *json.Decoder, key string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		return g.container(out, dec, t, key)
	case string:
		return writeJSONString(out, g.grow(key, t))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

func (g *streamGrower) container(out *bytes.Buffer, dec *json.Decoder, open json.Delim, key string) error {
	out.WriteByte(byte(open))
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if open == '{' {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key = k.(string)
			if err := writeJSONString(out, key); err != nil {
				return err
			}
			out.WriteByte(':')
		}
		if err := g.value(out, dec, key); err != nil {
			return err
		}
	}
	closer, err := dec.Token()
	if err != nil {
		return err
	}
	out.WriteByte(byte(closer.(json.Delim)))
	return nil
}

// grow makes an id unique to the repetition and pads text.
func (g *streamGrower) grow(key, s string) string {
	switch {
	case strings.HasSuffix(strings.ToLower(key), "id"):
		return s + "-" + strconv.Itoa(g.rep)
	case strings.ContainsAny(s, " \n"):
		return s + g.filler()
	}
	return s
}

// fillerWords look like the code and prose of tool output: some need
// escaping in JSON, one is not ASCII.
var fillerWords = []string{"func", "return", "err", "nil", "if", "the", "file", "\n", "\t", `"quoted"`, "a\\b", "—", "{", "}", "x := 1", "// why"}

// filler is up to 4 KiB of text, and every eighth time up to 32 KiB, the
// size of a file read whole.
func (g *streamGrower) filler() string {
	n := g.rng.IntN(4 << 10)
	if g.rng.IntN(8) == 0 {
		n = g.rng.IntN(32 << 10)
	}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(fillerWords[g.rng.IntN(len(fillerWords))])
		b.WriteByte(' ')
	}
	return b.String()
}

// writeJSONString writes s the way the CLIs (Node's JSON.stringify) do:
// without escaping <, > and &.
func writeJSONString(out *bytes.Buffer, s string) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	out.Truncate(out.Len() - 1) // Encode's newline
	return nil
}

// The BenchmarkOutput benchmarks run an agent's stdout through all that
// ralph does with it, as a run does (agentProc.pipe): the copy into the raw
// output file and the parser's feed, the line cutter, the CLI's parser, the
// redaction of each report and the activity budget, with the default
// limits. The stream is far past the activity budget, as with an agent
// that prints without end. allocB/B is the bytes allocated per byte of
// output: what makes the collector run, and the heap grow past what is live
// when it lags.

// BenchmarkOutputText is a plain-text agent printing 100-byte lines, with
// a secret value in the environment and without.
func BenchmarkOutputText(b *testing.B) {
	line := strings.Repeat("0123456789", 10)[:99] + "\n"
	data := bytes.Repeat([]byte(line), largeStreamSize/len(line))
	b.Run("secret", func(b *testing.B) { benchOutput(b, "command", benchSecret, data) })
	b.Run("no-secret", func(b *testing.B) { benchOutput(b, "command", nil, data) })
}

// BenchmarkOutputClaude is Claude's stream-json grown from its recorded
// tool loop (largeStream).
func BenchmarkOutputClaude(b *testing.B) {
	benchOutput(b, "claude", benchSecret, largeStream(b, "claude"))
}

// benchSecret is the environment of a user with an API key.
var benchSecret = []string{"ANTHROPIC_API_KEY=sk-ant-bench-0123456789abcdef"}

func benchOutput(b *testing.B, cli string, env []string, data []byte) {
	inv := invocation{
		backend: cli, parse: clis[cli].parse, verdict: commandVerdict,
		redactor: redact.New(env, nil), limits: OutputLimits{}.resolved(),
	}
	reported := 0
	report := func(events.Activity) { reported++ }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		p := newAgentProc(inv, events.AgentRun{RawOutput: io.Discard}, report)
		p.pipe(bytes.NewReader(data), strings.NewReader(""))
		p.copiers.Wait() // the end of drain
		_ = p.feed.Close()
		p.raw.close()
		res := <-p.parsed
		if res.Failure != events.FailureNone || res.FinalText == "" || p.raw.err != nil {
			b.Fatalf("run failed: %v %q %v", res.Failure, res.FailureMessage, p.raw.err)
		}
	}
	runtime.ReadMemStats(&after)
	if reported == 0 {
		b.Fatal("nothing reported")
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(data)), "allocB/B")
}
