package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const key = "sk-test-4f1c2a9e7b3d" // what ANTHROPIC_API_KEY holds in these tests

func TestIsSecretName(t *testing.T) {
	secret := []string{
		"API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
		"AWS_ACCESS_KEY_ID", "PGPASSWORD", "OPENAI_APIKEY", "npm_config_authToken", "apiKeyId",
		"SSH_KEYS", "GH_TOKENS", "KEY", "key", "KEY2", "CLIENT_SECRET", "client-secret", "MONKEY",
	}
	for _, name := range secret {
		assert.True(t, IsSecretName(name), name)
	}
	plain := []string{
		"KEYBOARD", "KEYCHAIN", "XKB_KEYMAP", "TOKENIZERS_PARALLELISM", "SECRETARY", "PASSWORDLESS",
		"PATH", "HOME", "GOPATH", "PWD", "LANG", "",
	}
	for _, name := range plain {
		assert.False(t, IsSecretName(name), name)
	}
}

func TestNewChoosesVariables(t *testing.T) {
	r := New([]string{
		"ANTHROPIC_API_KEY=other-value-for-another-agent",
		"ANTHROPIC_API_KEY=" + key, // both values are hidden
		"DEBUG_TOKEN=1",            // too short to be a secret
		"EMPTY_SECRET=",
		"DATABASE_URL=postgres://u:hunter2hunter2@db/x", // listed below
		"SHORT_LISTED=abc",
		"HOME=/home/somebody-long",
		"NOEQUALS",
	}, []string{"DATABASE_URL", "SHORT_LISTED", "UNSET_LISTED"})

	assert.Equal(t, []string{"ANTHROPIC_API_KEY", "DATABASE_URL"}, r.Names())
	assert.Equal(t, []string{"SHORT_LISTED"}, r.TooShort(), "a listed value too short to hide deserves a warning")
	assert.Equal(t, "key [redacted:ANTHROPIC_API_KEY], other [redacted:ANTHROPIC_API_KEY], home /home/somebody-long, 1 abc",
		r.String("key "+key+", other other-value-for-another-agent, home /home/somebody-long, 1 abc"))
	assert.Equal(t, "[redacted:DATABASE_URL]", r.String("postgres://u:hunter2hunter2@db/x"))
}

func TestMinLength(t *testing.T) {
	r := New([]string{"A_KEY=1234567", "B_KEY=12345678"}, nil)
	assert.Equal(t, "1234567 [redacted:B_KEY]", r.String("1234567 12345678"))
	assert.Equal(t, "a", New([]string{"X_TOKEN=a"}, []string{"X_TOKEN"}).String("a"),
		"a one-letter value must not hide every a")
}

func TestSameValueTwoNamesIsNamedDeterministically(t *testing.T) {
	for range 5 {
		r := New([]string{"API_KEY=" + key, "ANTHROPIC_API_KEY=" + key}, nil)
		assert.Equal(t, "[redacted:ANTHROPIC_API_KEY]", r.String(key))
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
	assert.Equal(t, "x "+key, nilR.String("x "+key))
	assert.Nil(t, nilR.Names())
	var b bytes.Buffer
	w := nilR.NewWriter(&b)
	_, err := w.Write([]byte(key))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, key, b.String())
	assert.True(t, New([]string{"PATH=/usr/bin"}, nil).Empty())
}

func TestJSONStaysValid(t *testing.T) {
	r := New([]string{"ANTHROPIC_API_KEY=" + key, "PIN_SECRET=12345678"}, nil)
	tests := map[string]struct{ in, want string }{
		"no secret kept byte for byte": {`{"b":1, "a":"x"}`, `{"b":1, "a":"x"}`},
		"string":                       {`"env: ANTHROPIC_API_KEY=` + key + `"`, `"env: ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]"`},
		"object, keys too":             {`{"msg":["` + key + `"],"` + key + `":true}`, `{"[redacted:ANTHROPIC_API_KEY]":true,"msg":["[redacted:ANTHROPIC_API_KEY]"]}`},
		"number":                       {`{"pin":12345678,"n":3}`, `{"n":3,"pin":"[redacted:PIN_SECRET]"}`},
		"not JSON":                     {`oops ` + key, `oops [redacted:ANTHROPIC_API_KEY]`},
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
	r := New([]string{"ANTHROPIC_API_KEY=" + key, "GITHUB_TOKEN=" + other,
		"A_KEY=AAAA1111BBBB", "B_KEY=BBBB2222CCCC", // overlapping
		"SHORT_TOKEN=abcdef123456", "LONG_TOKEN=xyz-abcdef123456-uvw", // one inside the other
	}, nil)
	text := `{"type":"tool_result","content":"ANTHROPIC_API_KEY=` + key + `\nGITHUB_TOKEN=` + other + `"}` +
		"\nsk-te\nAAAA1111BBBB2222CCCC xyz-abcdef123456-uvw abcdef123456\nend " + key
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
	r := New([]string{"ANTHROPIC_API_KEY=" + key}, nil)
	var b bytes.Buffer
	w := r.NewWriter(&b)

	_, err := w.Write([]byte("a whole line\n"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\n", b.String(), "nothing there can begin the key: written at once")

	_, err = w.Write([]byte("then sk-te"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\nthen ", b.String(), "the start of the key waits for the next write")

	_, err = w.Write([]byte("xt"))
	require.NoError(t, err)
	assert.Equal(t, "a whole line\nthen sk-text", b.String(), "not the key after all")

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
	w := New([]string{"ANTHROPIC_API_KEY=" + key}, nil).NewWriter(fw)
	_, err := w.Write([]byte("line\n"))
	require.ErrorIs(t, err, assert.AnError)
	_, err = w.Write([]byte("more\n"))
	require.ErrorIs(t, err, assert.AnError)
	require.ErrorIs(t, w.Close(), assert.AnError)
	assert.Equal(t, 1, fw.n, "nothing is written after the first failure")
}

// BenchmarkWriter measures the cost of redacting an agent's output on its
// way to the raw log: a stream of JSON lines with a typical environment's
// worth of secrets to look for, against the same stream copied as is.
func BenchmarkWriter(b *testing.B) {
	var env []string
	for i := range 20 {
		env = append(env, fmt.Sprintf("SERVICE_%d_TOKEN=tok-%d-%s", i, i, strings.Repeat("x", 30)))
	}
	line := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("ran the tests; all pass. ", 20) + `"}]}}` + "\n")
	for _, bc := range []struct {
		name string
		r    *Redactor
	}{{"none", nil}, {"20 secrets", New(env, nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			w := bc.r.NewWriter(io.Discard)
			for b.Loop() {
				if _, err := w.Write(line); err != nil {
					b.Fatal(err)
				}
			}
		})
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
