package backends

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// plainTextCLIs are the CLIs whose whole stdout is the answer.
var plainTextCLIs = []string{"kiro", "amp", "cursor", nameCommand}

// fuzzCLIs are the names in clis in a fixed order, so that the fuzzer's
// which byte always names the same parser. Every CLI's parser is fuzzed:
// one added to clis is in by being registered. (A function, because clis
// is filled by the init functions, after package variables are set.)
func fuzzCLIs() []string { return slices.Sorted(maps.Keys(clis)) }

// fuzzSeed is the first argument that makes FuzzStreamParsers use cli's
// parser.
func fuzzSeed(cli string) uint8 {
	i := slices.Index(fuzzCLIs(), cli)
	if i < 0 {
		panic("no parser for " + cli)
	}
	return uint8(i)
}

// stdoutFixtures returns the recorded stdout streams of cli, by file name.
// The plain-text CLIs share the command backend's, as no recordings of
// kiro, amp or cursor exist.
func stdoutFixtures(tb testing.TB, cli string) map[string][]byte {
	tb.Helper()
	dir := cli
	if slices.Contains(plainTextCLIs, cli) {
		dir = nameCommand
	}
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	require.NoError(tb, err)
	out := map[string][]byte{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".requests.jsonl") || strings.HasSuffix(p, ".stderr.txt") || strings.HasSuffix(p, ".json") {
			continue // what the CLI sent its model, its stderr, its usage file: not its stdout
		}
		data, err := os.ReadFile(p)
		require.NoError(tb, err)
		out[filepath.Base(p)] = data
	}
	require.NotEmpty(tb, out, "no recorded stdout for %s", cli)
	return out
}

// maxFuzzStream bounds the inputs FuzzStreamParsers tries. The mutator
// grows inputs up to 100 MB; a bit over the line readers' 64 KiB buffer is
// enough to reach every path.
const maxFuzzStream = 256 << 10

// FuzzStreamParsers runs the parser of CLI fuzzCLIs[which] over data. which
// is fuzzed too, so a mutation of one CLI's recording also reaches the
// other parsers: the streams share shapes (qwen's is claude's), and every
// JSON-lines parser must skip the others' lines.
func FuzzStreamParsers(f *testing.F) {
	for _, cli := range fuzzCLIs() {
		for _, data := range stdoutFixtures(f, cli) {
			f.Add(fuzzSeed(cli), data)
			// Lines alone too: small inputs mutate faster, and a mutation
			// that copies a line into itself builds the odd streams (two
			// result lines, say) that no recording has.
			for line := range bytes.Lines(data) {
				f.Add(fuzzSeed(cli), line)
			}
		}
	}
	for cli, s := range map[string]string{
		"claude":   `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1777936568}}`,
		"qwen":     `{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"edit","input":{"file_path":"a"}}]}}` + "\n" + `{"type":"result","is_error":false,"result":"[API Error: 429 quota]"}`,
		"codex":    `{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again in 2 days 17 hours 14 minutes."}}`,
		"opencode": `{"type":"error","error":{"name":"APIError","data":{"message":"slow down","statusCode":429,"responseHeaders":{"retry-after":"Wed, 21 Oct 2026 07:28:00 GMT"}}}}`,
		"copilot":  `{"type":"session.error","data":{"errorType":"rate_limit","message":"Please retry after 2733 seconds."}}`,
		"gemini":   "banner\r\n{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"a\"}\r\n{\"type\":\"result\",\"status\":\"error\",\"error\":{\"message\":\"try again at Apr 28th, 2026 10:03 PM.\"}}",
		"pi":       `{"type":"auto_retry_end","success":false,"finalError":"Try again in ~91 min."}`,
		"kiro":     "no newline at the end",
	} {
		f.Add(fuzzSeed(cli), []byte(s))
	}
	// A line longer than the line readers' 64 KiB buffer.
	long := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", 70<<10) + `"}]}}` + "\n")
	f.Add(fuzzSeed("claude"), long)
	f.Add(fuzzSeed("codex"), long)
	f.Add(fuzzSeed(nameCommand), long)

	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		if len(data) > maxFuzzStream {
			t.Skip("the mutator grew the input past what is worth parsing")
		}
		names := fuzzCLIs()
		cli := names[int(which)%len(names)]
		checkStreamParser(t, cli, clis[cli].parse, data)
		checkMutedParse(t, cli, clis[cli].parse, data)
		if _, ok := parserLineTypes[cli]; ok {
			checkLineTypeSkipping(t, cli, clis[cli].parse, data)
		}
	})
}

// checkStreamParser checks what every parser promises, whatever the bytes:
// it reads to EOF, the way the pipe splits the stream changes nothing, and
// the activity it reports agrees with the result it returns.
func checkStreamParser(t *testing.T, name string, parse parseFunc, data []byte) {
	t.Helper()
	r := &eofReader{r: bytes.NewReader(data)}
	var acts []events.Activity
	res := parse(r, func(a events.Activity) { acts = append(acts, a) }, fixedEnv)
	require.True(t, r.sawEOF, "%s: parse returned before EOF; the agent would block on a full pipe", name)

	// A pipe may hand over any number of bytes at a time, and the last ones
	// with EOF.
	var split []events.Activity
	splitRes := parse(iotest.DataErrReader(&choppyReader{data: data}),
		func(a events.Activity) { split = append(split, a) }, fixedEnv)
	require.Equal(t, res, splitRes, "%s: result depends on how reads split the stream", name)
	require.Equal(t, acts, split, "%s: activity depends on how reads split the stream", name)

	switch res.Failure {
	case events.FailureNone, events.FailureAgent, events.FailureAuth, events.FailureRateLimit:
	default:
		t.Fatalf("%s: the output alone cannot show failure %q", name, res.Failure)
	}
	require.Equal(t, res.Failure == events.FailureNone, res.FailureMessage == "",
		"%s: a failure comes with a message and only a failure does (failure %q, message %q)", name, res.Failure, res.FailureMessage)
	require.NotContains(t, res.FailureMessage, "\n", "%s: a failure message is one line", name)
	if !res.RateLimitResetAt.IsZero() {
		require.Equal(t, events.FailureRateLimit, res.Failure, "%s: a reset time only comes with a rate limit", name)
	}

	var usage events.Usage
	var cost float64
	var tools events.ToolCounts
	saidWhy := false
	for _, a := range acts {
		switch a.Kind {
		case events.ActivityUsage:
			usage = usage.Add(a.Usage)
			cost += a.CostUSD
		case events.ActivityTool:
			require.Contains(t, []events.ToolKind{events.ToolRead, events.ToolWrite, events.ToolShell, events.ToolOther}, a.Tool, name)
			tools.Count(a.Tool)
		case events.ActivityText:
			require.NotEmpty(t, a.Text, "%s: an empty text activity", name)
		case events.ActivityError, events.ActivityRateLimit:
			saidWhy = true
		default:
			t.Fatalf("%s: unknown activity kind %q", name, a.Kind)
		}
	}
	// Reporters add usage activities up while the agent runs (see the
	// package's Usage notes), so they must reach the result's figures.
	require.Equal(t, res.Usage, usage, "%s: usage activities add up to the result's usage", name)
	require.True(t, sameFloat(res.CostUSD, cost), "%s: cost activities add up to %v, the result says %v", name, cost, res.CostUSD)
	require.Equal(t, res.Tools, tools, "%s: one tool activity per counted tool use", name)
	if res.Failure != events.FailureNone {
		require.True(t, saidWhy, "%s: failure %q was never reported as an error or rate limit activity", name, res.Failure)
	}

	if slices.Contains(plainTextCLIs, name) {
		require.Equal(t, string(data), res.FinalText, "%s: all of stdout is the final text", name)
		require.Equal(t, nonBlankLines(data), textsOf(acts), "%s: every non-blank line is reported as text", name)
	}
}

// checkMutedParse checks that a parser past the activity budget, from
// which report on it goes past depending on data, returns what it returns
// otherwise, and reports as much: only the text, path and command of text
// and tool reports, which the budget leaves out, may go missing.
func checkMutedParse(t *testing.T, name string, parse parseFunc, data []byte) {
	t.Helper()
	var want []events.Activity
	wantRes := parse(bytes.NewReader(data), func(a events.Activity) { want = append(want, a) }, fixedEnv)

	muteAfter := len(data) % 3
	var got []events.Activity
	env := fixedEnv
	env.activityFull = func() bool { return len(got) >= muteAfter }
	res := parse(bytes.NewReader(data), func(a events.Activity) { got = append(got, a) }, env)
	require.Equal(t, wantRes, res, "%s: the result past the activity budget", name)
	require.Equal(t, unmuted(want), unmuted(got), "%s: the activity past the activity budget", name)
}

// unmuted is acts without what the activity budget leaves out.
func unmuted(acts []events.Activity) []events.Activity {
	out := slices.Clone(acts)
	for i, a := range out {
		if a.Kind == events.ActivityText || a.Kind == events.ActivityTool {
			out[i].Text, out[i].Path, out[i].Command = "", "", ""
		}
	}
	return out
}

// eofReader notes whether its reader was read to the end.
type eofReader struct {
	r      io.Reader
	sawEOF bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		e.sawEOF = true
	}
	return n, err
}

// choppyReader hands out its data in reads of 1, 2, … 61 bytes, then 1
// again, so that the line readers see lines cut at every kind of place.
// (A byte per read would do too, at several times the cost per input.)
type choppyReader struct {
	data []byte
	next int
}

func (c *choppyReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	c.next = c.next%61 + 1
	n := copy(p[:min(len(p), c.next)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// sameFloat is == except that NaN equals NaN: huge costs can add up to
// +Inf and -Inf, whose sum is NaN on both sides.
func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// nonBlankLines is what a plain-text CLI reports line by line: each line
// without its line ending, blank ones left out.
func nonBlankLines(data []byte) []string {
	var out []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line = strings.TrimRight(line, "\r\n"); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}

func textsOf(acts []events.Activity) []string {
	var out []string
	for _, a := range acts {
		if a.Kind == events.ActivityText {
			out = append(out, a.Text)
		}
	}
	return out
}
