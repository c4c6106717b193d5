package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "sk-test-4f1c2a9e7b3d" // what ANTHROPIC_API_KEY holds in these tests

func TestIsSecretName(t *testing.T) {
	secret := []string{
		"API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
		"AWS_ACCESS_KEY_ID", "PGPASSWORD", "OPENAI_APIKEY", "npm_config_authToken", "apiKeyId",
		"SSH_KEYS", "GH_TOKENS", "KEY", "key", "KEY2", "CLIENT_SECRET", "client-secret", "MONKEY",
		"MYSQL_PWD", "mysqlPwd", "GPG_PASSPHRASE", "SSH_KEY_PASSPHRASE", "DB_PASSWD", "GH_PAT", "GITHUB_PAT", "ADO_PATS",
		"SMTP_PASS", "REDIS_PASS",
	}
	for _, name := range secret {
		assert.True(t, IsSecretName(name), name)
	}
	plain := []string{
		"KEYBOARD", "KEYCHAIN", "XKB_KEYMAP", "TOKENIZERS_PARALLELISM", "SECRETARY", "PASSWORDLESS",
		"PATH", "HOME", "GOPATH", "PWD", "LANG", "",
		"OLDPWD", "PWD_HISTORY", "PATTERN", "PAT_FILE", "PASSENGER", "BYPASS", "COMPASS", "PASS_THROUGH", "DATABASE_URL",
	}
	for _, name := range plain {
		assert.False(t, IsSecretName(name), name)
	}
}

func TestNewChoosesVariables(t *testing.T) {
	r := New([]string{
		"ANTHROPIC_API_KEY=other-value-for-another-agent",
		"ANTHROPIC_API_KEY=" + testKey, // both values are hidden
		"DEBUG_TOKEN=1",                // too short to be a secret
		"EMPTY_SECRET=",
		"DATABASE_URL=postgres://u:hunter2hunter2@db/x", // a URL with a password
		"SHORT_LISTED=abc",
		"HOME=/home/somebody-long",
		"NOEQUALS",
	}, []string{"DATABASE_URL", "SHORT_LISTED", "UNSET_LISTED"})

	assert.Equal(t, []string{"ANTHROPIC_API_KEY", "DATABASE_URL"}, r.Names())
	assert.Equal(t, []string{"SHORT_LISTED"}, r.TooShort(), "a listed value too short to hide deserves a warning")
	assert.Equal(t, "testKey [redacted:ANTHROPIC_API_KEY], other [redacted:ANTHROPIC_API_KEY], home /home/somebody-long, 1 abc",
		r.String("testKey "+testKey+", other other-value-for-another-agent, home /home/somebody-long, 1 abc"))
	assert.Equal(t, "[redacted:DATABASE_URL]", r.String("postgres://u:hunter2hunter2@db/x"))
}

// A URL with a password is a secret whatever its variable's name: the
// whole URL, and the password on its own, as the URL spells it and
// decoded. A URL without one is not.
func TestURLPasswordsAreHidden(t *testing.T) {
	r := New([]string{
		"DATABASE_URL=postgres://app:hunter2hunter2@db.internal:5432/app?sslmode=require",
		"REDIS_URL=redis://:p%40ssw0rd-redis@cache:6379/0",
		"HTTPS_PROXY=http://me:short@proxy:3128",
		"HOMEPAGE_URL=https://user@example.com/path",
		"DOCS=see https://example.com/a:b@c",
	}, nil)
	assert.Equal(t, []string{"DATABASE_URL", "HTTPS_PROXY", "REDIS_URL"}, r.Names())
	tests := map[string]struct{ in, want string }{
		"the URL":                 {"dial postgres://app:hunter2hunter2@db.internal:5432/app?sslmode=require: refused", "dial [redacted:DATABASE_URL]: refused"},
		"the password alone":      {"PGPASSWORD=hunter2hunter2", "PGPASSWORD=[redacted:DATABASE_URL]"},
		"as the URL spells it":    {"auth p%40ssw0rd-redis", "auth [redacted:REDIS_URL]"},
		"decoded":                 {"AUTH p@ssw0rd-redis", "AUTH [redacted:REDIS_URL]"},
		"a short password's URL":  {"proxy http://me:short@proxy:3128 ok", "proxy [redacted:HTTPS_PROXY] ok"},
		"a short password alone":  {"short", "short"},
		"no password: left alone": {"https://user@example.com/path", "https://user@example.com/path"},
		"not a URL's userinfo":    {"see https://example.com/a:b@c", "see https://example.com/a:b@c"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, r.String(tt.in))
		})
	}
}

// encodedSecret has a character of each kind that encoders treat apart:
// '/', '+', '?', '&', '<', '"', '\\', a space and a letter past ASCII.
const encodedSecret = "s3cr3t/pa+ss?w\u00f6rd&<x>\"q\\ z"

// Every form a program commonly prints a value in is hidden: encoded,
// escaped inside JSON, or both.
func TestEncodedFormsAreHidden(t *testing.T) {
	r := New([]string{"DEPLOY_TOKEN=" + encodedSecret}, nil)
	const mask = "[redacted:DEPLOY_TOKEN]"
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	jsonOf := func(s string, html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		require.NoError(t, enc.Encode(s))
		return strings.TrimSpace(b.String())
	}
	php := strings.ReplaceAll(jsonOf(encodedSecret, false), "/", `\/`)
	python := strings.ReplaceAll(jsonOf(encodedSecret, false), "\u00f6", `\u00f6`)
	forms := map[string]string{
		"plain":                        encodedSecret,
		"base64":                       b64(base64.StdEncoding, encodedSecret),
		"base64, no padding":           b64(base64.RawStdEncoding, encodedSecret),
		"base64 URL":                   b64(base64.URLEncoding, encodedSecret),
		"base64 URL, no padding":       b64(base64.RawURLEncoding, encodedSecret),
		"in a Basic auth header":       "Authorization: Basic " + b64(base64.StdEncoding, "deploy:"+encodedSecret),
		"in a longer base64 text, 1":   b64(base64.StdEncoding, "x"+encodedSecret+"tail"),
		"in a longer base64 text, 2":   b64(base64.URLEncoding, "xy"+encodedSecret+"tail"),
		"query escaped":                url.QueryEscape(encodedSecret),
		"path escaped":                 url.PathEscape(encodedSecret),
		"percent, lower case":          strings.ToLower(url.QueryEscape(encodedSecret)),
		"hex":                          hex.EncodeToString([]byte(encodedSecret)),
		"HEX":                          strings.ToUpper(hex.EncodeToString([]byte(encodedSecret))),
		"JSON":                         jsonOf(encodedSecret, false),
		"JSON, HTML escaped":           jsonOf(encodedSecret, true),
		"JSON, slash escaped":          php,
		"JSON, ASCII only":             python,
		"JSON in JSON":                 jsonOf(jsonOf(encodedSecret, false), false),
		"JSON in JSON, HTML escaped":   jsonOf(jsonOf(encodedSecret, true), true),
		"base64 in slash-escaped JSON": strings.ReplaceAll(jsonOf(b64(base64.StdEncoding, encodedSecret), false), "/", `\/`),
		"URL-encoded in JSON":          jsonOf("https://x.example/?t="+url.QueryEscape(encodedSecret), false),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			got := r.String("before " + form + " after")
			assert.Contains(t, got, mask)
			assert.True(t, strings.HasPrefix(got, "before "), got)
			assert.True(t, strings.HasSuffix(got, " after"), got)
			for _, leak := range []string{"s3cr3t", "pa+ss", "czNjcjN0", "73336372"} { // its start, in clear, base64 and hex
				assert.NotContains(t, got, leak)
			}
		})
	}
}

// Of a value inside a longer base64 text, no character that its bytes
// alone decide is left, wherever they fall in a 3-byte group.
func TestBase64InsideLongerTextHidesEveryCharacterOfTheValue(t *testing.T) {
	r := New([]string{"API_KEY=" + testKey}, nil)
	for lead := range 6 {
		text := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", lead) + testKey + "bbbbbb"))
		got := r.String(text)
		require.Contains(t, got, "[redacted:API_KEY]", "lead %d", lead)
		start := (8*lead + 5) / 6
		end := 8 * (lead + len(testKey)) / 6
		assert.Equal(t, text[:start]+"[redacted:API_KEY]"+text[end:], got, "lead %d", lead)
	}
}

func TestMinLength(t *testing.T) {
	r := New([]string{"A_KEY=1234567", "B_KEY=12345678"}, nil)
	assert.Equal(t, "1234567 [redacted:B_KEY]", r.String("1234567 12345678"))
	assert.Equal(t, "a", New([]string{"X_TOKEN=a"}, []string{"X_TOKEN"}).String("a"),
		"a one-letter value must not hide every a")
}

func TestSameValueTwoNamesIsNamedDeterministically(t *testing.T) {
	for range 5 {
		r := New([]string{"API_KEY=" + testKey, "ANTHROPIC_API_KEY=" + testKey}, nil)
		assert.Equal(t, "[redacted:ANTHROPIC_API_KEY]", r.String(testKey))
	}
}

func TestLongestValueFirst(t *testing.T) {
	short := "abcdef123456"
	long := "xyz-" + short + "-uvw"
	r := New([]string{"SHORT_TOKEN=" + short, "LONG_TOKEN=" + long}, nil)
	assert.Equal(t, "[redacted:LONG_TOKEN] and [redacted:SHORT_TOKEN]", r.String(long+" and "+short),
		"a value that contains another is hidden whole under its own name")
}

func TestOverlappingValuesAreBothHidden(t *testing.T) {
	a, b := "AAAA1111BBBB", "BBBB2222CCCC"
	r := New([]string{"A_KEY=" + a, "B_KEY=" + b}, nil)
	got := r.String("x AAAA1111BBBB2222CCCC y")
	assert.Equal(t, "x [redacted:A_KEY] y", got)
	assert.NotContains(t, got, "2222", "no part of the second value is left")
}

func TestJSONEscapedFormsAreHidden(t *testing.T) {
	secret := `p"ss\word<&>` + "\t1"
	r := New([]string{"DB_PASSWORD=" + secret}, nil)
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		require.NoError(t, enc.Encode(map[string]string{"output": "pw=" + secret}))
		got := r.String(b.String())
		assert.Equal(t, `{"output":"pw=[redacted:DB_PASSWORD]"}`+"\n", got, "html escaping %v", html)
	}
}

func TestMultiLineValueIsHiddenLineByLine(t *testing.T) {
	pem := "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END KEY-----"
	r := New([]string{"SSH_PRIVATE_KEY=" + pem}, nil)
	assert.Equal(t, "[redacted:SSH_PRIVATE_KEY]", r.String(pem))
	got := r.String("head: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC …")
	assert.Equal(t, "head: [redacted:SSH_PRIVATE_KEY] …", got, "a value printed in part is hidden by its lines")
}

func TestNilAndEmptyRedactNothing(t *testing.T) {
	var nilR *Redactor
	assert.Equal(t, "x "+testKey, nilR.String("x "+testKey))
	assert.Nil(t, nilR.Names())
	var b bytes.Buffer
	w := nilR.NewWriter(&b)
	_, err := w.Write([]byte(testKey))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, testKey, b.String())
	assert.True(t, New([]string{"PATH=/usr/bin"}, nil).Empty())
}

func TestJSONStaysValid(t *testing.T) {
	r := New([]string{"ANTHROPIC_API_KEY=" + testKey, "PIN_SECRET=12345678"}, nil)
	tests := map[string]struct{ in, want string }{
		"no secret kept byte for byte": {`{"b":1, "a":"x"}`, `{"b":1, "a":"x"}`},
		"string":                       {`"env: ANTHROPIC_API_KEY=` + testKey + `"`, `"env: ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]"`},
		"object, keys too":             {`{"msg":["` + testKey + `"],"` + testKey + `":true}`, `{"[redacted:ANTHROPIC_API_KEY]":true,"msg":["[redacted:ANTHROPIC_API_KEY]"]}`},
		"number":                       {`{"pin":12345678,"n":3}`, `{"n":3,"pin":"[redacted:PIN_SECRET]"}`},
		"not JSON":                     {`oops ` + testKey, `oops [redacted:ANTHROPIC_API_KEY]`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := r.JSON(json.RawMessage(tt.in))
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// The hard part of a stream: the value split across two writes, at every
// byte, and written a byte at a time.
func TestWriterSplitAtEveryByte(t *testing.T) {
	other := "ghp_0123456789abcdef"
	r := New([]string{"ANTHROPIC_API_KEY=" + testKey, "GITHUB_TOKEN=" + other,
		"A_KEY=AAAA1111BBBB", "B_KEY=BBBB2222CCCC", // overlapping
		"SHORT_TOKEN=abcdef123456", "LONG_TOKEN=xyz-abcdef123456-uvw", // one inside the other
	}, nil)
	text := `{"type":"tool_result","content":"ANTHROPIC_API_KEY=` + testKey + `\nGITHUB_TOKEN=` + other + `"}` +
		"\nsk-te\nAAAA1111BBBB2222CCCC xyz-abcdef123456-uvw abcdef123456\nend " + testKey
	want := r.String(text)
	require.Equal(t, `{"type":"tool_result","content":"ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]\nGITHUB_TOKEN=[redacted:GITHUB_TOKEN]"}`+
		"\nsk-te\n[redacted:A_KEY] [redacted:LONG_TOKEN] [redacted:SHORT_TOKEN]\nend [redacted:ANTHROPIC_API_KEY]", want)

	for i := 0; i <= len(text); i++ {
		got := writeInPieces(t, r, text[:i], text[i:])
		assert.Equal(t, want, got, "split at byte %d", i)
	}
	pieces := strings.Split(text, "")
	assert.Equal(t, want, writeInPieces(t, r, pieces...), "a byte at a time")
}

func writeInPieces(t *testing.T, r *Redactor, pieces ...string) string {
	t.Helper()
	var b bytes.Buffer
	w := r.NewWriter(&b)
	for _, p := range pieces {
		n, err := w.Write([]byte(p))
		require.NoError(t, err)
		require.Equal(t, len(p), n)
	}
	require.NoError(t, w.Close())
	return b.String()
}

func TestWriterHoldsBackOnlyWhatMayBeginAValue(t *testing.T) {
	r := New([]string{"ANTHROPIC_API_KEY=" + testKey}, nil)
	var b bytes.Buffer
	w := r.NewWriter(&b)

	_, err := w.Write([]byte("a whole line\n"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\n", b.String(), "nothing there can begin the testKey: written at once")

	_, err = w.Write([]byte("then sk-te"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\nthen ", b.String(), "the start of the testKey waits for the next write")

	_, err = w.Write([]byte("xt"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\nthen sk-text", b.String(), "not the testKey after all")

	_, err = w.Write([]byte(" sk"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, "a whole line\nthen sk-text sk", b.String(), "Close writes what was held")
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, assert.AnError
}

func TestWriterKeepsTheFirstError(t *testing.T) {
	fw := &failingWriter{}
	w := New([]string{"ANTHROPIC_API_KEY=" + testKey}, nil).NewWriter(fw)
	_, err := w.Write([]byte("line\n"))
	require.ErrorIs(t, err, assert.AnError)
	_, err = w.Write([]byte("more\n"))
	require.ErrorIs(t, err, assert.AnError)
	require.ErrorIs(t, w.Close(), assert.AnError)
	assert.Equal(t, 1, fw.n, "nothing is written after the first failure")
}

// benchEnv is a typical environment's worth of secrets to look for.
func benchEnv() []string {
	var env []string
	for i := range 20 {
		env = append(env, fmt.Sprintf("SERVICE_%d_TOKEN=tok-%d-%s", i, i, strings.Repeat("x", 30)))
	}
	return env
}

// benchLine is an agent's JSON line, with no secret in it.
var benchLine = []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("ran the tests; all pass. ", 20) + `"}]}}` + "\n")

// BenchmarkWriter measures the cost of redacting an agent's output on its
// way to the raw log: a stream of JSON lines with a typical environment's
// worth of secrets to look for, against the same stream copied as is.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name string
		r    *Redactor
	}{{"none", nil}, {"20 secrets", New(benchEnv(), nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchLine)))
			w := bc.r.NewWriter(io.Discard)
			for b.Loop() {
				if _, err := w.Write(benchLine); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLine measures what a reader of a log pays per line: most lines
// hold no secret; one that does is rewritten.
func BenchmarkLine(b *testing.B) {
	r := New(benchEnv(), nil)
	leaky := bytes.Replace(benchLine, []byte("all pass"), []byte("tok-7-"+strings.Repeat("x", 30)), 1)
	for name, line := range map[string][]byte{"no secret": benchLine, "a secret": leaky} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				r.Line(line)
			}
		})
	}
}

// BenchmarkString measures what hiding values in a string costs, as is done
// to each field of every activity report: most hold no secret.
func BenchmarkString(b *testing.B) {
	r := New(benchEnv(), nil)
	line := string(benchLine)
	leaky := strings.Replace(line, "all pass", "tok-7-"+strings.Repeat("x", 30), 1)
	for name, s := range map[string]string{"no secret": line, "a secret": leaky} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				r.String(s)
			}
		})
	}
}

// BenchmarkNew measures making a Redactor, every form of every value.
func BenchmarkNew(b *testing.B) {
	env := benchEnv()
	for b.Loop() {
		New(env, nil)
	}
}

func TestFromEnvironmentHidesTheHandedOnNames(t *testing.T) {
	t.Setenv("PLAIN_LOOKING", "a-value-long-enough")
	env := NamesEnv([]string{"PLAIN_LOOKING"})
	require.Len(t, env, 1)
	name, value, _ := strings.Cut(env[0], "=")
	t.Setenv(name, value)
	assert.Equal(t, "x [redacted:PLAIN_LOOKING] y", FromEnvironment().String("x a-value-long-enough y"))
	assert.Empty(t, NamesEnv(nil))
}

func TestLineStaysValidJSON(t *testing.T) {
	r := New([]string{"ANTHROPIC_API_KEY=" + testKey, "PIN_SECRET=12345678"}, nil)
	plain := []byte(`{"topic":"build.done","payload":"ok"}`)
	got := r.Line(plain)
	assert.Equal(t, string(plain), string(got))
	assert.Same(t, &plain[0], &got[0], "a line without a secret is returned as it is")

	tests := map[string]struct{ in, want string }{
		"in place, key order kept": {`{"topic":"t","payload":"key ` + testKey + `"}`, `{"topic":"t","payload":"key [redacted:ANTHROPIC_API_KEY]"}`},
		"a number, as JSON":        {`{"topic":"t","pin":12345678}`, `{"pin":"[redacted:PIN_SECRET]","topic":"t"}`},
		"not JSON, as bytes":       {`oops ` + testKey + `"`, `oops [redacted:ANTHROPIC_API_KEY]"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := r.Line([]byte(tt.in))
			assert.Equal(t, tt.want, string(got))
			if json.Valid([]byte(tt.in)) {
				assert.True(t, json.Valid(got))
			}
		})
	}
}

// A stream split anywhere still hides the encoded forms.
func TestWriterHidesEncodedFormsSplitAnywhere(t *testing.T) {
	r := New([]string{"DEPLOY_TOKEN=" + encodedSecret}, nil)
	text := "basic " + base64.StdEncoding.EncodeToString([]byte("u:"+encodedSecret)) + "\nhex " +
		hex.EncodeToString([]byte(encodedSecret)) + " url " + url.QueryEscape(encodedSecret)
	want := r.String(text)
	require.Equal(t, 3, strings.Count(want, "[redacted:DEPLOY_TOKEN]"), want)
	for i := 0; i <= len(text); i++ {
		assert.Equal(t, want, writeInPieces(t, r, text[:i], text[i:]), "split at byte %d", i)
	}
}
