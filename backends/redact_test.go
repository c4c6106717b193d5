//go:build unix

package backends

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
)

// testKey is the secret the redaction subtests give the agent and plant in
// its recorded output.
const (
	testKeyName = "ANTHROPIC_API_KEY"
	testKey     = "sk-test-conformance-7f3a9c1e5b"
	testMask    = "[redacted:" + testKeyName + "]"
)

// withKey copies a recorded stream into a temporary file with the key
// planted at each replacement (old, new, old, new, …), so that the CLI's
// own format carries it where a real agent leaks one: the command and
// output of a shell tool that printed it, the final text, an API error that
// echoes it. It returns the copy and whether the key is in it.
func withKey(t *testing.T, rel string, replacements ...string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(absTestdata(t, rel))
	require.NoError(t, err)
	text := strings.NewReplacer(replacements...).Replace(string(data))
	path := filepath.Join(t.TempDir(), filepath.Base(rel))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path, strings.Contains(text, testKey)
}

// redactingBackend is the CLI's backend with the redactor ralph builds: from
// the environment the agent gets, which holds the key.
func (s conformanceSuite) redactingBackend(t *testing.T, runEnv []string) *Backend {
	t.Helper()
	return s.backend(t, Options{Redactor: redact.New(append(os.Environ(), runEnv...), nil)})
}

func (s conformanceSuite) secretsRedactedNormal(t *testing.T) {
	t.Parallel()
	stream, planted := withKey(t, s.c.Normal,
		"echo hi", "echo "+testKey,
		"LOOP_COMPLETE", "LOOP_COMPLETE "+testKey)
	require.True(t, planted, "the key is in the tool-loop stream")
	env := append(fakeEnv("STDOUT", stream, "PRINT_ENV", "1"), testKeyName+"="+testKey)
	var raw bytes.Buffer
	var acts activities
	res, err := s.redactingBackend(t, env).Run(t.Context(), events.AgentRun{
		Prompt: "Create hello.txt", Dir: t.TempDir(), Env: env, RawOutput: &raw,
	}, acts.report)
	require.NoError(t, err)

	assertNoKey(t, raw.String(), &acts, res)
	assert.Contains(t, raw.String(), testKeyName+"="+testMask, "the printed environment")
	assert.Contains(t, res.FinalText, "LOOP_COMPLETE "+testMask)
}

// secretsRedactedError: an API error that echoes the key, on stdout in the
// CLI's format or on stderr, whichever the recording has it in.
func (s conformanceSuite) secretsRedactedError(t *testing.T) {
	t.Parallel()
	echo := []string{"scripted failure", "scripted failure: invalid x-api-key " + testKey}
	stdout, inStdout := withKey(t, s.c.Error, echo...)
	env := append(fakeEnv("STDOUT", stdout, "EXIT", strconv.Itoa(s.c.ErrorExit), "PRINT_ENV", "1"),
		testKeyName+"="+testKey)
	inStderr := false
	if s.c.ErrorStderr != "" {
		var stderr string
		stderr, inStderr = withKey(t, s.c.ErrorStderr, echo...)
		env = append(env, "FAKE_AGENT_STDERR="+stderr)
	}
	require.True(t, inStdout || inStderr, "the key is in the error turn's output")
	var raw bytes.Buffer
	var acts activities
	res, err := s.redactingBackend(t, env).Run(t.Context(), events.AgentRun{
		Prompt: "Say hello.", Dir: t.TempDir(), Env: env, RawOutput: &raw,
	}, acts.report)
	require.NoError(t, err)
	require.True(t, res.Failed(), "failure %q", res.Failure)

	assertNoKey(t, raw.String(), &acts, res)
	assert.Contains(t, raw.String(), "x-api-key "+testMask)
}

// assertNoKey checks every output of a run: the raw output ralph keeps,
// each activity it reported and the result.
func assertNoKey(t *testing.T, raw string, acts *activities, res events.AgentResult) {
	t.Helper()
	assert.NotContains(t, raw, testKey, "raw output")
	acts.mu.Lock()
	defer acts.mu.Unlock()
	for _, a := range acts.list {
		assert.NotContains(t, fmt.Sprintf("%+v", a), testKey, "activity")
	}
	assert.NotContains(t, fmt.Sprintf("%+v", res), testKey, "result")
}
