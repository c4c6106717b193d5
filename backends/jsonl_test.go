package backends

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// Shared by the parser tests of codex, gemini, opencode, pi, qwen and
// copilot. The recorded streams in testdata/<cli>/ were captured against
// ralph's scripted fake model (backends/testdata/README.md#recording says
// how, and with which commands). Files named *-rate-limit.jsonl,
// *-auth.jsonl, *-recovered.jsonl and *-retried.jsonl are synthesized:
// their first line, which the parsers skip as non-JSON, says so and names
// the source of their shape and wording.

// testNow is the clock rate-limit reset times are read against in tests.
var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return testNow }

// fixedEnv is the parsers' environment in tests: fixedClock, and the
// default bound of a final text.
var fixedEnv = parseEnv{now: fixedClock, textLimit: maxTextOutput}

// What the scripted model says in the recorded tool-loop and tool-error
// runs, whichever agent CLI carried it.
const (
	toolLoopFinal  = "Created hello.txt and appended a line.\n<event topic=\"build.done\">tests: pass</event>\nLOOP_COMPLETE"
	toolErrorFinal = "The file is missing.\n<event topic=\"build.failed\">missing file</event>"
)

// toolLoopTexts are the text activities of the tool-loop run.
var toolLoopTexts = []string{"I will create hello.txt.", toolLoopFinal}

// toolAct is an expected tool activity.
type toolAct struct {
	kind    events.ToolKind
	name    string
	path    string
	command string
}

// parserCase is what one recorded stream must parse to.
type parserCase struct {
	file        string // under testdata/
	final       string
	tools       events.ToolCounts
	usage       events.Usage
	cost        float64
	failure     events.FailureKind
	message     string // exact FailureMessage, when set
	messageHas  string // a part of FailureMessage, when set
	resetAt     time.Time
	toolActs    []toolAct // when set, the tool activities in order
	texts       []string  // when set, the text activities in order
	rateLimitAt []time.Time
}

// runParserCases runs every case through parse as a named subtest.
func runParserCases(t *testing.T, parse parseFunc, cases map[string]parserCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			defer f.Close()
			var acts []events.Activity
			res := parse(f, func(a events.Activity) { acts = append(acts, a) }, fixedEnv)
			assertParsed(t, tc, res, acts)
		})
	}
}

func assertParsed(t *testing.T, tc parserCase, res events.AgentResult, acts []events.Activity) {
	t.Helper()
	assert.Equal(t, tc.final, res.FinalText, "final text")
	assert.Equal(t, tc.tools, res.Tools, "tool counts")
	assert.Equal(t, tc.usage, res.Usage, "usage")
	assert.InDelta(t, tc.cost, res.CostUSD, 1e-9, "cost")
	assert.Equal(t, tc.failure, res.Failure, "failure kind (message %q)", res.FailureMessage)
	if tc.message != "" {
		assert.Equal(t, tc.message, res.FailureMessage)
	}
	if tc.messageHas != "" {
		assert.Contains(t, res.FailureMessage, tc.messageHas)
	}
	if tc.failure == events.FailureNone {
		assert.Empty(t, res.FailureMessage)
	} else {
		assert.NotContains(t, res.FailureMessage, "\n", "a failure message is one line")
	}
	assert.True(t, tc.resetAt.Equal(res.RateLimitResetAt), "reset at: want %v, got %v", tc.resetAt, res.RateLimitResetAt)

	// The activities agree with the result: usage increments add up, every
	// counted tool use was reported once.
	var usage events.Usage
	var cost float64
	var tools []toolAct
	var texts []string
	var limits []time.Time
	var counted events.ToolCounts
	for _, a := range acts {
		switch a.Kind {
		case events.ActivityUsage:
			usage = usage.Add(a.Usage)
			cost += a.CostUSD
		case events.ActivityTool:
			counted.Count(a.Tool)
			tools = append(tools, toolAct{kind: a.Tool, name: a.ToolName, path: a.Path, command: a.Command})
		case events.ActivityText:
			texts = append(texts, a.Text)
		case events.ActivityRateLimit:
			limits = append(limits, a.ResetAt)
		case events.ActivityError, events.ActivityWarning:
			// Not part of the result's totals.
		}
	}
	assert.Equal(t, res.Usage, usage, "usage activities add up to the usage")
	assert.InDelta(t, res.CostUSD, cost, 1e-9, "cost activities add up to the cost")
	assert.Equal(t, res.Tools, counted, "one tool activity per counted use")
	if tc.toolActs != nil {
		assert.Equal(t, tc.toolActs, tools, "tool activities")
	}
	if tc.texts != nil {
		assert.Equal(t, tc.texts, texts, "text activities")
	}
	if tc.rateLimitAt != nil {
		require.Len(t, limits, len(tc.rateLimitAt), "rate-limit activities")
		for i := range limits {
			assert.True(t, tc.rateLimitAt[i].Equal(limits[i]), "rate-limit activity %d: want %v, got %v", i, tc.rateLimitAt[i], limits[i])
		}
	}
}

// argsCase is one expected command line.
type argsCase struct {
	opts    Options
	want    []string
	onStdin bool
}

// runArgsCases runs every case as a named subtest through the registered
// agent CLI name: where its prompt "PROMPT" goes (deliver), then its
// arguments.
func runArgsCases(t *testing.T, name string, cases map[string]argsCase) {
	t.Helper()
	spec := clis[name]
	require.NotNil(t, spec, "%s is registered", name)
	for desc, tc := range cases {
		t.Run(desc, func(t *testing.T) {
			d := deliver(spec, tc.opts, "PROMPT")
			assert.Equal(t, tc.want, spec.args(tc.opts, d.arg, d.onStdin))
			assert.Equal(t, tc.onStdin, d.onStdin)
			assert.Empty(t, d.warning, "a short prompt goes where the options say, without a warning")
		})
	}
}

func TestForEachLine(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // far past bufio's buffer and Scanner's 64 KiB
	cases := map[string]struct {
		in   string
		want []string
	}{
		"a line of megabytes":               {in: "a\n" + long + "\nb\n", want: []string{"a", long, "b"}},
		"last line without a newline":       {in: "a\nb", want: []string{"a", "b"}},
		"CRLF endings":                      {in: "a\r\nb\r\n", want: []string{"a", "b"}},
		"blank lines are lines":             {in: "a\n\nb\n", want: []string{"a", "", "b"}},
		"empty input":                       {in: "", want: nil},
		"long last line without a newline":  {in: long, want: []string{long}},
		"long line then a short final line": {in: long + "\nz", want: []string{long, "z"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			require.NoError(t, forEachLine(strings.NewReader(tc.in), func(line []byte) {
				got = append(got, string(line))
			}))
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestForEachJSONLineSkipsWhatIsNotAnObject(t *testing.T) {
	in := "Warning: 256-color support not detected.\n{\"a\":1}\n  {\"a\":2}  \n[1,2]\n# note\n{\"a\":3"
	var got []string
	forEachJSONLine(strings.NewReader(in), func(line []byte) { got = append(got, string(line)) })
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`, `{"a":3`}, got, "objects only; a cut-off object still reaches the decoder, which drops it")
}

func TestDecodeJSONLine(t *testing.T) {
	var v struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	assert.True(t, decodeJSONLine([]byte(`{"a":"x","b":"not a number"}`), &v), "a field of the wrong type costs only that field")
	assert.Equal(t, "x", v.A)
	assert.False(t, decodeJSONLine([]byte(`{"a":"x"`), &v), "a cut-off line is dropped")
}

func TestStatusIn(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want int
	}{
		"codex unexpected status":   {"unexpected status 401 Unauthorized: {}", 401},
		"codex retry limit":         {"exceeded retry limit, last status: 429 Too Many Requests", 429},
		"qwen API error":            {"[API Error: 400 fakemodel scripted failure]", 400},
		"gemini JSON code":          {`[API Error: {"error":{"code":400,"message":"x"}}]`, 400},
		"pi status first":           {"429 Rate limit reached", 429},
		"gemini got status":         {"[API Error: got status: 429 Too Many Requests. {}]", 429},
		"HTTP status line":          {"upstream answered HTTP/1.1 503", 503},
		"error code":                {"Error code: 401 - invalid key", 401},
		"API error in parentheses":  {"OpenAI API error (429): rate_limit_exceeded", 429},
		"no status":                 {"fakemodel scripted failure", 0},
		"a number that is no error": {"wrote 429 bytes", 0},
		"2xx is no error":           {"status 200", 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, statusIn(tc.msg))
		})
	}
}

func TestFailureKind(t *testing.T) {
	cases := map[string]struct {
		msg    string
		status int
		want   events.FailureKind
	}{
		"codex usage limit":          {"You've hit your usage limit. Try again later.", 0, events.FailureRateLimit},
		"codex retry limit on 429":   {"exceeded retry limit, last status: 429 Too Many Requests", 0, events.FailureRateLimit},
		"codex quota exceeded":       {"Quota exceeded. Check your plan and billing details.", 0, events.FailureRateLimit},
		"gemini resource exhausted":  {`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`, 0, events.FailureRateLimit},
		"gemini daily quota":         {"You have exhausted your daily quota on this model.", 0, events.FailureRateLimit},
		"copilot rate limit":         {"Sorry, you've hit a rate limit that restricts the number of Copilot model requests", 0, events.FailureRateLimit},
		"qwen oauth quota":           {"Qwen OAuth quota exceeded: Your free daily quota has been reached.", 0, events.FailureRateLimit},
		"status field 429":           {"provider unavailable", 429, events.FailureRateLimit},
		"codex 401":                  {"unexpected status 401 Unauthorized: {}", 0, events.FailureAuth},
		"status field 403":           {"denied", 403, events.FailureAuth},
		"gemini bad key is HTTP 400": {`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key."}}`, 0, events.FailureAuth},
		"anthropic bad key":          {`401 {"type":"authentication_error","message":"invalid x-api-key"}`, 0, events.FailureAuth},
		"openai bad key":             {"Incorrect API key provided: sk-test.", 0, events.FailureAuth},
		"not logged in":              {"Not logged in. Please run /login", 0, events.FailureAuth},
		"gemini auth method":         {"Invalid auth method selected.", 0, events.FailureAuth},
		"qwen oauth discontinued":    {"Qwen OAuth free tier has been discontinued as of 2026-04-15.", 0, events.FailureAuth},
		"bad request":                {"400 fakemodel scripted failure", 0, events.FailureAgent},
		"server error":               {"We're currently experiencing high demand, which may cause temporary errors.", 0, events.FailureAgent},
		"context window":             {"Codex ran out of room in the model's context window.", 0, events.FailureAgent},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, failureKind(tc.msg, tc.status))
		})
	}
}

func TestResetAtIn(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want time.Time
	}{
		"codex same day":            {"You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM.", time.Date(2026, 11, 22, 15, 28, 0, 0, time.UTC)},
		"codex morning":             {"You've hit your usage limit. Try again at 9:05 AM.", time.Date(2026, 11, 22, 9, 5, 0, 0, time.UTC)},
		"codex noon":                {"try again at 12:30 PM.", time.Date(2026, 11, 22, 12, 30, 0, 0, time.UTC)},
		"codex midnight":            {"try again at 12:10 AM.", time.Date(2026, 11, 22, 0, 10, 0, 0, time.UTC)},
		"codex other day":           {"You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Apr 28th, 2026 10:03 PM.", time.Date(2026, 4, 28, 22, 3, 0, 0, time.UTC)},
		"codex old relative form":   {"You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.", testNow.Add(65*time.Hour + 14*time.Minute)},
		"codex model at capacity":   {"Model gpt-5.5 is at capacity. Please try a different model. Try again in 5m.", testNow.Add(5 * time.Minute)},
		"codex capacity in days":    {"Model gpt-5.5 is at capacity. Please try a different model. Try again in 1d.", testNow.Add(24 * time.Hour)},
		"less than a minute":        {"Try again in less than a minute.", testNow.Add(time.Minute)},
		"gemini retry in":           {"Quota exceeded for metric: x, limit: 20\nPlease retry in 58.821668433s.", testNow.Add(58821668433 * time.Nanosecond)},
		"gemini suggested":          {"Resource has been exhausted\nSuggested retry after 60s.", testNow.Add(time.Minute)},
		"gemini quota reset":        {"[API Error: You have exhausted your capacity on this model. Your quota will reset after 12h22m45s.]", testNow.Add(12*time.Hour + 22*time.Minute + 45*time.Second)},
		"gemini retryDelay field":   {`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"43s"}`, testNow.Add(43 * time.Second)},
		"pi chatgpt limit":          {"You have hit your ChatGPT usage limit (plus plan). Try again in ~91 min.", testNow.Add(91 * time.Minute)},
		"pi in hours":               {"You have hit your ChatGPT usage limit (Plus plan). Try again in ~3 hr.", testNow.Add(3 * time.Hour)},
		"copilot hours":             {"Please try again in 2 hours. Please review our Terms of Service", testNow.Add(2 * time.Hour)},
		"copilot retry after":       {"Sorry, you've exceeded your 5 hour session limits. Please retry after 2733 seconds. (user_global_rate_limited:pro)", testNow.Add(2733 * time.Second)},
		"copilot wait":              {"You've hit your global rate limit. Please upgrade your plan or wait 6 seconds for your limit to reset.", testNow.Add(6 * time.Second)},
		"copilot wait minutes":      {"Sorry, you have been rate-limited. Please wait 2 minutes before trying again.", testNow.Add(2 * time.Minute)},
		"openai seconds":            {"Rate limit reached for gpt-4o. Please try again in 1.2s.", testNow.Add(1200 * time.Millisecond)},
		"openai milliseconds":       {"Rate limit reached. Please try again in 120ms.", testNow.Add(120 * time.Millisecond)},
		"openai minutes and secs":   {"Please try again in 6m0s.", testNow.Add(6 * time.Minute)},
		"codex body resets_at":      {`{"error":{"type":"usage_limit_reached","resets_at":1795338000,"resets_in_seconds":25200}}`, time.Unix(1795338000, 0)},
		"codex body seconds only":   {`{"type":"usage_limit_reached","resets_in_seconds":13872}`, testNow.Add(13872 * time.Second)},
		"retrying is no duration":   {"Attempt 1 failed with status 429. Retrying with backoff...", time.Time{}},
		"a brief wait is no time":   {"Rate limit exceeded. Please retry after a brief wait.", time.Time{}},
		"try again later":           {"You've hit your usage limit. Try again later.", time.Time{}},
		"no reset at all":           {"429 status code (no body)", time.Time{}},
		"first usable lead-in wins": {"Retrying... then try again in 30 seconds", testNow.Add(30 * time.Second)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := resetAtIn(tc.msg, testNow)
			assert.True(t, tc.want.Equal(got), "want %v, got %v", tc.want, got)
		})
	}
}

func TestResetAtInUsesTheClockZone(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*3600)
	got := resetAtIn("or try again at 3:28 PM.", testNow.In(zone))
	assert.True(t, time.Date(2026, 11, 22, 15, 28, 0, 0, zone).Equal(got), "codex prints local time; got %v", got)
}

func TestUnwrapShell(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"codex bash -lc":       {"/bin/bash -lc 'echo hi >> hello.txt'", "echo hi >> hello.txt"},
		"escaped single quote": {`/bin/bash -lc 'echo '"'"'hi'"'"''`, "echo 'hi'"},
		"shlex quote escape":   {`/bin/bash -lc 'echo it'\''s'`, "echo it's"},
		"plain word":           {"/bin/bash -lc ls", "ls"},
		"zsh":                  {"/bin/zsh -lc 'cat a.txt'", "cat a.txt"},
		"not wrapped":          {"cat does-not-exist.txt", "cat does-not-exist.txt"},
		"two words stay":       {"/bin/bash -lc 'echo' hi", "/bin/bash -lc 'echo' hi"},
		"unterminated stays":   {"/bin/bash -lc 'echo", "/bin/bash -lc 'echo"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, unwrapShell(tc.in))
		})
	}
}

// verdictCase is a result, exit status and stderr, and the verdict they
// must come to.
type verdictCase struct {
	res        events.AgentResult
	exit       int
	stderr     string
	failure    events.FailureKind
	message    string // exact FailureMessage, when set
	messageHas string // a part of FailureMessage, when set
}

// runVerdictCases runs every case through verdict as a named subtest.
func runVerdictCases(t *testing.T, verdict func(res *events.AgentResult, exit int, stderr string), cases map[string]verdictCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := tc.res
			verdict(&res, tc.exit, tc.stderr)
			assert.Equal(t, tc.failure, res.Failure)
			if tc.message != "" {
				assert.Equal(t, tc.message, res.FailureMessage)
			}
			if tc.messageHas != "" {
				assert.Contains(t, res.FailureMessage, tc.messageHas)
			}
		})
	}
}

func TestExitVerdict(t *testing.T) {
	runVerdictCases(t, func(res *events.AgentResult, exit int, stderr string) {
		exitVerdict(res, "x", exit, stderr, "log in")
	}, map[string]verdictCase{
		"the output's verdict stands": {
			res:  events.AgentResult{Failure: events.FailureAgent, FailureMessage: "x reported an error: boom"},
			exit: 1, failure: events.FailureAgent, message: "x reported an error: boom",
		},
		"exit 0 is success": {exit: 0, stderr: "Reading additional input from stdin...\n"},
		"non-zero exit quotes stderr": {
			exit: 2, stderr: "Reading additional input from stdin...\nError: unknown flag --bogus\n",
			failure: events.FailureExit, message: "x exited with status 2: Error: unknown flag --bogus",
		},
		"non-zero exit without stderr": {exit: 1, failure: events.FailureExit, message: "x exited with status 1"},
		"rate limit on stderr": {
			exit: 1, stderr: "ERROR: You've hit your usage limit. Try again later.\n",
			failure: events.FailureRateLimit, messageHas: "x hit a rate or usage limit: ERROR: You've hit your usage limit",
		},
		"credentials on stderr": {
			exit: 1, stderr: "Error: Not logged in. Run `x login` first.\n",
			failure: events.FailureAuth, message: "x could not authenticate: Error: Not logged in. Run `x login` first.; log in",
		},
		"an old retry warning does not decide": {
			exit:    1,
			stderr:  "Attempt 1 failed with status 429. Retrying...\n" + strings.Repeat("working\n", 12) + "fatal: disk full\n",
			failure: events.FailureExit, message: "x exited with status 1: fatal: disk full",
		},
	})
}

func TestEveryCLIHasAnInstallHint(t *testing.T) {
	for name, spec := range clis {
		t.Run(name, func(t *testing.T) {
			assert.NotEmpty(t, strings.TrimSpace(spec.install))
		})
	}
}

// TestParsersSurviveOddInput feeds every parser of this file's CLIs input no
// CLI would print whole: it must not panic and must not invent a result.
func TestParsersSurviveOddInput(t *testing.T) {
	inputs := map[string]string{
		"empty":                "",
		"banner only":          "Loading...\nDone\n",
		"truncated JSON":       `{"type":"result","status":"err`,
		"wrong field types":    `{"type":7,"item":"x","message":{"content":5},"part":[],"data":null}` + "\n",
		"binary noise":         "\x00\x01\xff{\n",
		"JSON array and nulls": "[]\nnull\n{}\n",
	}
	for _, name := range []string{"claude", "codex", "gemini", "opencode", "pi", "qwen", "copilot"} {
		for desc, in := range inputs {
			t.Run(name+"/"+desc, func(t *testing.T) {
				var acts []events.Activity
				res := clis[name].parse(bytes.NewBufferString(in), func(a events.Activity) { acts = append(acts, a) }, fixedEnv)
				assert.Equal(t, events.AgentResult{}, res)
				assert.Empty(t, acts)
			})
		}
	}
}

// parserLineTypes are the lineTypes of every JSON-lines parser.
var parserLineTypes = map[string]lineTypes{
	"claude": claudeTypes, "codex": codexTypes, "copilot": copilotTypes, "gemini": geminiTypes,
	"opencode": opencodeTypes, "pi": piTypes, "qwen": qwenTypes,
}

func TestLineTypesMayMatch(t *testing.T) {
	types := newLineTypes("result", "item.completed")
	for line, want := range map[string]bool{
		`{"type":"result","x":1}`:               true,
		`{ "type" : "result" }`:                 true,
		`{"TYPE":"item.completed"}`:             true, // keys match without regard to case
		`{"type":"res\u0075lt"}`:                true, // an escape can spell the name
		`{"result":{"type":"tool"}}`:            false,
		`{"result" :1,"type":"user"}`:           false,
		`{"type":"user","text":"a \"result\""}`: false,
		`{"type":"user","text":"say \"result"}`: true, // a false true costs a decode only
		`{"type":"results"}`:                    false,
		`{"type":"item.started"}`:               false,
		`{"type":"x","type":"result"}`:          true, // the last of duplicate names wins
		`{"type":"result":1}`:                   false,
	} {
		assert.Equal(t, want, types.mayMatch([]byte(line)), line)
	}
	assert.Panics(t, func() { newLineTypes(`a"b`) }, "a name that needs escaping in JSON")
}

// FuzzLineTypes checks that the byte check that lets forEachJSONObject skip
// a line never skips one whose decoded type a parser acts on: whatever
// decodeJSONLine reads as the type of a skipped line is in no parser's
// lineTypes.
func FuzzLineTypes(f *testing.F) {
	for _, cli := range fuzzCLIs() {
		for _, data := range stdoutFixtures(f, cli) {
			for line := range bytes.Lines(data) {
				f.Add(line)
			}
		}
	}
	for _, s := range []string{`{"type":"res\u0075lt"}`, `{"TyPe" :	"result"}`, `{"type":"x","type":"result"}`, `{"result":"type","type":"assistant"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		var l struct {
			Type string `json:"type"`
		}
		if !decodeJSONLine(line, &l) {
			return
		}
		for cli, types := range parserLineTypes {
			if slices.ContainsFunc(types, func(q []byte) bool { return string(q) == strconv.Quote(l.Type) }) {
				require.True(t, types.mayMatch(line), "%s would skip a line of type %q", cli, l.Type)
			}
		}
	})
}

// TestLineTypesSkipNothingUsed parses every recorded stream of each
// JSON-lines CLI, and each of its lines alone, with and without skipping
// the lines that lineTypes rule out: a type a parser acts on but left out
// of its newLineTypes list would make the two differ. FuzzStreamParsers checks the same on fuzzed streams.
func TestLineTypesSkipNothingUsed(t *testing.T) {
	for cli := range parserLineTypes {
		streams := stdoutFixtures(t, cli)
		// The shared recordings, where this checkout has them beside it.
		shared, err := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "agents", cli, "*.jsonl"))
		require.NoError(t, err)
		for _, p := range shared {
			if strings.HasSuffix(p, ".requests.jsonl") {
				continue
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			streams["shared/"+filepath.Base(p)] = data
		}
		if line, ok := unrecordedLines[cli]; ok {
			streams["unrecorded"] = []byte(line)
		}
		for name, data := range streams {
			checkLineTypeSkipping(t, cli+"/"+name, clis[cli].parse, data)
			// Each line alone too: in a whole stream a later line can hide
			// a skipped one (codex's turn.failed repeats its error line).
			for i, line := range slices.Collect(bytes.Lines(data)) {
				checkLineTypeSkipping(t, fmt.Sprintf("%s/%s line %d", cli, name, i+1), clis[cli].parse, line)
			}
		}
	}
}

// unrecordedLines have a line of each type in a parser's lineTypes that no
// recording has, so that TestLineTypesSkipNothingUsed covers every type.
var unrecordedLines = map[string]string{
	"claude": `{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.5,"usage":{"input_tokens":3,"output_tokens":4}}` + "\n" +
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1778565600}}`,
	"codex":   `{"type":"item.updated","item":{"id":"u","type":"command_execution","command":"ls"}}`,
	"copilot": `{"type":"assistant.usage","ephemeral":true,"data":{"model":"m","inputTokens":100,"outputTokens":7,"cacheReadTokens":50,"cost":1}}`,
	"gemini":  `{"type":"error","severity":"error","message":"Resource exhausted. Please retry in 2s."}`,
}

// checkLineTypeSkipping requires parse to give the same result and
// activities on data whether forEachJSONObject skips lines by type or
// decodes them all. It sets a package variable, so its callers must not
// run in parallel.
func checkLineTypeSkipping(t *testing.T, name string, parse parseFunc, data []byte) {
	t.Helper()
	run := func(skip bool) (events.AgentResult, []events.Activity) {
		skipOtherLineTypes = skip
		defer func() { skipOtherLineTypes = true }()
		var acts []events.Activity
		res := parse(bytes.NewReader(data), func(a events.Activity) { acts = append(acts, a) }, fixedEnv)
		return res, acts
	}
	res, acts := run(true)
	allRes, allActs := run(false)
	require.Equal(t, allRes, res, "%s: skipping lines by type changes the result", name)
	require.Equal(t, allActs, acts, "%s: skipping lines by type changes the activities", name)
}

// lineDecoders decode a line into each JSON-lines parser's line struct, the
// way the parser does (decodeJSONLine) and the way it did before, with
// encoding/json, and require the same outcome.
var lineDecoders = map[string]func(t *testing.T, line []byte){
	"claude": func(t *testing.T, line []byte) {
		sameDecoding[claudeLine](t, line)
		sameMutedDecoding(t, line)
	},
	"codex":    sameDecoding[codexLine],
	"copilot":  sameDecoding[copilotLine],
	"gemini":   sameDecoding[geminiLine],
	"opencode": sameDecoding[opencodeLine],
	"pi":       sameDecoding[piLine],
	"qwen":     sameDecoding[qwenLine],
}

// sameMutedDecoding requires a line to decode to a claudeMutedLine exactly
// when it decodes to a claudeLine, and to the same but for the text its
// blocks leave out.
func sameMutedDecoding(t *testing.T, line []byte) {
	t.Helper()
	var full claudeLine
	var muted claudeMutedLine
	fullOK := decodeJSONLine(line, &full)
	require.Equal(t, fullOK, decodeJSONLine(line, &muted), "muted from %q", line)
	if !fullOK {
		return
	}
	require.Equal(t, full.claudeFields, muted.claudeFields, "muted from %q", line)
	require.Equal(t, full.Message == nil, muted.Message == nil, "muted from %q", line)
	if full.Message == nil {
		return
	}
	require.Equal(t, full.Message.claudeMessageHead, muted.Message.claudeMessageHead, "muted from %q", line)
	var want []claudeMutedBlock
	for _, b := range full.Message.Content {
		want = append(want, claudeMutedBlock{Type: b.Type, Text: b.Text != "", Name: b.Name})
	}
	var got []claudeMutedBlock
	if len(muted.Message.Content) > 0 {
		got = muted.Message.Content
	}
	require.Equal(t, want, got, "muted from %q", line)
}

// UnmarshalJSON decodes toolArgs the way they were read before they had
// UnmarshalJSONFrom, through a map of every argument: sameDecoding has
// encoding/json call it, holding UnmarshalJSONFrom (which decodeJSONLine
// calls instead) to the same results.
func (a *toolArgs) UnmarshalJSON(b []byte) error {
	var m map[string]any
	err := json.Unmarshal(b, &m)
	if err == nil && m == nil { // null
		*a = nil
	}
	for k, v := range m {
		if slices.Contains(toolCommandKeys, k) || slices.Contains(toolPathKeys, k) {
			if *a == nil {
				*a = toolArgs{}
			}
			s, _ := v.(string)
			(*a)[k] = s
		}
	}
	return nil // a value of another type leaves them as they were
}

// sameDecoding requires decodeJSONLine to accept line exactly when
// encoding/json's Unmarshal does (no error, or only fields of the wrong
// type), and then to fill a T the same way.
func sameDecoding[T any](t *testing.T, line []byte) {
	t.Helper()
	var want, got T
	err := json.Unmarshal(line, &want)
	var typeErr *json.UnmarshalTypeError
	wantOK := err == nil || errors.As(err, &typeErr)
	gotOK := decodeJSONLine(line, &got)
	require.Equal(t, wantOK, gotOK, "%T: encoding/json says %v for %q", want, err, line)
	if wantOK {
		require.Equal(t, want, got, "%T from %q", want, line)
	}
}

// FuzzDecodeJSONLine holds decodeJSONLine to encoding/json's results for
// every parser's line struct, on every recorded line and on lines made to
// hit the rules where decoders tend to differ.
func FuzzDecodeJSONLine(f *testing.F) {
	require.Equal(f, slices.Sorted(maps.Keys(parserLineTypes)), slices.Sorted(maps.Keys(lineDecoders)),
		"every JSON-lines parser's line struct is in lineDecoders")
	for _, cli := range slices.Sorted(maps.Keys(lineDecoders)) {
		for _, data := range stdoutFixtures(f, cli) {
			for line := range bytes.Lines(data) {
				f.Add(bytes.TrimSpace(line))
			}
		}
	}
	for _, s := range []string{
		`{"TYPE":"result","Result":"a","rEsUlT":"b"}`, // names match without regard to case; the last wins
		`{"type":"result","type":"assistant"}`,        // duplicate names
		`{"type":"item.completed","item":{"id":"a","type":"command_execution","command":["bash","-lc","x"]}}`,
		`{"type":"item.completed","item":{"id":1,"text":"kept"}}`, // a field of the wrong type
		`{"type":"item.completed","item":{"id":"a"},"item":{"text":"b"}}`,
		`{"type":"item.completed","item":{"id":"a"},"item":null}`,
		`{"type":"step_finish","part":{"tokens":{"input":1e3,"output":1.5,"cache":{"read":99999999999999999999}}}}`,
		`{"type":"message","content":"\ud83d\ude00 \ud83d x \u00e9 \xff\xfe"}`, // surrogates, a lone one, invalid UTF-8
		`{"type":"tool_use","parameters":{"file_path":"a","FILE_PATH":"b","content":null}}`,
		`{"type":"tool_use","parameters":"not an object"}`,
		`{"type":"tool_use","parameters":{"command":"a","cmd":"b"},"parameters":{"command":1,"file\u005fpath":"c\n","x":[{"path":"d"}]}}`,
		`{"type":"tool_use","parameters":{"path":"a"},"parameters":null,"parameters":{"dir_path":"","filePath":true}}`,
		`{"type":"tool_use","parameters":{"absolute_path":"a","absolute_path":"b","cmd":1e400}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"file_path":"a","content":"x\ny"}}]}}`,
		`{"type":"tool_execution_start","args":{"command":"ls"}}`,
		`{"type":"result","result":"a\n\u00e9","result":null}`,
		`{"type":"result","result":"a","result":{"b":1}}`,
		`{"type":"result","result":["a"]}`,
		`{"type":"item.completed","item":{"type":"command_execution","command":"a\nb","command":["bash","-lc","x"],"command":[1e400,"y"]}}`,
		`{"type":"item.completed","item":{"type":"command_execution","command":{"a":[1,null]},"command":null}}`,
		`{"type":"tool_use","part":{"state":{"input":{"filePath":"a"}}}}`,
		`{"type":"error","error":{"name":"x","data":{"responseHeaders":{"retry-after":"1","retry-after":2}}}}`,
		`{"type":"result","stats":{"input":null,"cached":-1}}`,
		`{"type":"result"} trailing`,
		`{"type":"result",}`,
		`{"type":"res` + "\x00" + `ult"}`,
		`[{"type":"result"}]`,
		`{"ſtatus":"error","K":1}`, // letters that fold to ASCII ones
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\n\"b\" \ud800 \u00e9 ÿ"},{"type":"text","text":""},{"type":"text","text":null},{"type":"text","text":1},{"type":"text","text":"\u0000"}]},"result":"\t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, cli := range slices.Sorted(maps.Keys(lineDecoders)) {
			lineDecoders[cli](t, line)
		}
	})
}
