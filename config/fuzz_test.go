package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hats"
)

// yamlSeeds are real configs: the presets ralph init writes, the
// repository's own, the demo's and ralph-orchestrator's.
func yamlSeeds(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, glob := range []string{"../examples/presets/*.yml", "../examples/demo/ralph.yml", "../ralph.yml", "testdata/*.yml", "testdata/*.json"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(f, err)
			out = append(out, data)
		}
	}
	require.NotEmpty(f, out)
	return out
}

func FuzzLoadYAML(f *testing.F) {
	for _, data := range yamlSeeds(f) {
		f.Add(data)
	}
	for _, s := range []string{
		"_defaults: &d {max_iterations: 3}\nevent_loop:\n  <<: *d\n  prompt: go\n",
		"a: &a [*a]\n",
		"x: &x [1, 1]\ny: &y [*x, *x, *x, *x]\nz: &z [*y, *y, *y, *y]\nevent_loop: {prompt: [*z, *z, *z, *z]}\n",
		"cli: {backend: command, command: ./agent.sh}\nhats:\n  a: {triggers: [t.a], backend: {model: m}}\n  b: {triggers: t.b, backend: codex}\n",
		"event_loop:\n\tprompt: tab\n",
		"task: t\ntask: again\n---\nmore: 1\n",
		"hats:\n  a: {triggers: [x]}\n  b: {triggers: [x]}\n",
		"max_iterations: 0\nagent: nope\nbudget: 5\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = checkLoad(t, "ralph.yml", data)
	})
}

// FuzzLoadJSON loads a ralph.json: a task file's {task, acceptance_criteria,
// max_iterations, budget} form, and the presets written as JSON. Beyond
// what FuzzLoadYAML checks, valid JSON is never called invalid.
func FuzzLoadJSON(f *testing.F) {
	for _, data := range yamlSeeds(f) {
		var v any
		if yaml.Unmarshal(data, &v) != nil {
			continue
		}
		asJSON, err := json.MarshalIndent(v, "", "  ")
		if err == nil {
			f.Add(asJSON)
		}
	}
	f.Add([]byte(`{"task":"t","acceptance_criteria":[{"type":"file_exists","path":"a"}],"max_iterations":3,"budget":{"max_tokens":1e4}}`))
	f.Add([]byte(`{"task":"caf\u00e9 \ud83d\ude00","max_iterations":3,"budget":{"max_tokens":-1,"x":1}}`))
	// JSON that YAML reads differently, or not at all: surrogate pairs as
	// Python writes them, a lone surrogate, DEL, a C1 control, a byte that
	// is not UTF-8.
	f.Add([]byte(`{"task":"caf\u00e9 \ud83d\ude00 \udead \\ud83d\\ude00","max_iterations":3}`))
	f.Add([]byte("{\"task\":\"\x7f \u0080 \xff \xef\xbf\xbf\"}"))
	f.Add([]byte("{\"task\":\t\"tabs\",\r\n\"hats\":{}}"))
	f.Add([]byte(`{"event_loop":{"prompt":"p"},"event_loop":{"max_iterations":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := checkLoad(t, "ralph.json", data)
		if !json.Valid(data) {
			return
		}
		if err != nil {
			for _, p := range err.Problems {
				require.False(t, strings.HasPrefix(p.Msg, "invalid JSON"), "valid JSON reported as invalid: %s", p)
			}
			return
		}
		// The objective reads as any JSON reader reads it.
		var top struct {
			Task      json.RawMessage `json:"task"`
			EventLoop json.RawMessage `json:"event_loop"`
		}
		var loop struct {
			Prompt json.RawMessage `json:"prompt"`
		}
		if exactKeys(data, &top) && (top.EventLoop == nil || exactKeys(top.EventLoop, &loop)) {
			for _, raw := range []json.RawMessage{top.Task, loop.Prompt} {
				if s := ""; json.Unmarshal(raw, &s) == nil {
					require.Equal(t, s, c.EventLoop.Prompt)
				}
			}
		}
	})
}

// exactKeys decodes a JSON object into v, reporting false unless its keys
// match v's field tags exactly: encoding/json matches them ignoring case,
// and ralph does not.
func exactKeys(data []byte, v any) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	for k := range m {
		if k != strings.ToLower(k) {
			return false
		}
	}
	return json.Unmarshal(data, v) == nil
}

// checkLoad loads data as the file name and checks what any load promises:
// a config or an error, never both; every problem placed in the file with
// what, where and how to fix it; the same answer every time; and a config
// that loads keeps the rules the loader enforces.
func checkLoad(t *testing.T, name string, data []byte) (*config.Config, *config.Error) {
	t.Helper()
	c, err := config.LoadBytes(name, data)
	again, errAgain := config.LoadBytes(name, data)
	require.Equal(t, c, again, "loading is deterministic")
	require.Equal(t, err, errAgain, "loading is deterministic")
	if err != nil {
		require.Nil(t, c, "no half-built config with an error")
		var cerr *config.Error
		require.True(t, errors.As(err, &cerr), "a bad config is a *config.Error, got %T", err)
		checkProblems(t, name, data, cerr)
		return nil, cerr
	}
	require.NotNil(t, c)
	checkConfig(t, name, c)
	return c, nil
}

func checkProblems(t *testing.T, name string, data []byte, err *config.Error) {
	t.Helper()
	require.NotEmpty(t, err.Problems)
	require.NotEmpty(t, err.Error())
	lines := bytes.Count(data, []byte("\n")) + 1
	prev := 0
	for _, p := range err.Problems {
		require.Equal(t, name, p.File, "problem %q is placed in the file", p.Msg)
		require.NotEmpty(t, p.Msg)
		require.NotEmpty(t, p.Hint, "problem %q says how to fix it", p)
		require.GreaterOrEqual(t, p.Line, 0, "%s", p)
		require.LessOrEqual(t, p.Line, lines+1, "problem %q is on a line of the file (%d lines)", p, lines)
		require.GreaterOrEqual(t, p.Line, prev, "problems are listed top to bottom")
		prev = p.Line
	}
}

func checkConfig(t *testing.T, name string, c *config.Config) {
	t.Helper()
	require.Equal(t, name, c.Path)
	el := c.EventLoop
	require.GreaterOrEqual(t, el.MaxIterations, 1)
	for _, n := range []int{el.MaxRuntimeSeconds, el.MaxConsecutiveFailures, el.CooldownDelaySeconds,
		el.IterationTimeoutSeconds, el.IdleTimeoutSeconds, el.KillGraceSeconds, el.StuckThreshold, el.RateLimitMaxWaitSeconds} {
		require.GreaterOrEqual(t, n, 0, "limits are never negative")
	}
	require.GreaterOrEqual(t, el.MaxTokens, int64(0))
	require.False(t, el.MaxCostUSD < 0, "cost limit %v", el.MaxCostUSD)
	require.Contains(t, []int{1, 2}, el.CompletionConfirmations)
	for _, topic := range append([]string{el.CompletionPromise, el.StartingEvent}, el.RequiredEvents...) {
		requireTopic(t, topic)
	}
	if el.CancellationPromise != "" {
		requireTopic(t, el.CancellationPromise)
	}
	checkCLI(t, "cli", c.CLI)

	ids := map[string]bool{}
	triggeredBy := map[string]string{}
	for _, h := range c.Hats {
		require.NotEqual(t, hats.CoordinatorID, h.ID)
		require.Regexp(t, `^[A-Za-z0-9][A-Za-z0-9_-]*$`, h.ID)
		require.False(t, ids[h.ID], "hat %q defined twice", h.ID)
		ids[h.ID] = true
		require.NotEmpty(t, h.Name)
		require.Equal(t, name, h.File)
		require.Positive(t, h.Line)
		require.GreaterOrEqual(t, h.MaxActivations, 0)
		for _, trig := range h.Triggers {
			requireTopic(t, trig)
			require.NotEqual(t, hats.ReservedResumeTopic, trig)
			if other, ok := triggeredBy[trig]; ok {
				require.Equal(t, other, h.ID, "hats %q and %q both trigger on %q", other, h.ID, trig)
			}
			triggeredBy[trig] = h.ID
		}
		for _, topic := range h.Publishes {
			requireTopic(t, topic)
		}
		if h.Backend != nil {
			checkCLI(t, "hats."+h.ID+".backend", *h.Backend)
		}
	}
	for _, w := range c.Warnings {
		require.True(t, strings.HasPrefix(w, name+": "), "warning %q names the file", w)
	}
}

// checkCLI checks a cli: section or a hat's backend as a run would use it.
func checkCLI(t *testing.T, path string, cli config.CLI) {
	t.Helper()
	require.NotEmpty(t, cli.Backend, "%s names a backend", path)
	require.Contains(t, []string{"", "arg", "stdin"}, cli.PromptMode, path)
	if cli.Backend == "command" {
		require.NotEmpty(t, cli.Command, "%s is the command backend, which needs a program to run", path)
	}
}

func requireTopic(t *testing.T, topic string) {
	t.Helper()
	require.NotEmpty(t, topic)
	require.False(t, slices.ContainsFunc([]rune(topic), unicode.IsSpace), "topic %q has whitespace", topic)
}
