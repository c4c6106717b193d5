package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunServesUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	logPath := filepath.Join(dir, "requests.jsonl")
	require.NoError(t, os.WriteFile(script, []byte(`{"turns":[{"text":"hi"}]}`), 0o644))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-script", script, "-log", logPath}, pw)
		_ = pw.Close()
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), line)
	url := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))

	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"bash"}}]}`))
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	_ = resp.Body.Close()
	assert.Equal(t, "chat.completion", v["object"])

	cancel()
	require.NoError(t, <-done)
	logged, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.Contains(t, string(logged), `"kind":"main"`)
	assert.Contains(t, string(logged), `"turn":1`)
}

func TestRunNeedsAScript(t *testing.T) {
	err := run(t.Context(), nil, io.Discard)
	assert.ErrorContains(t, err, "-script is required")

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"turns":[{"tool":[]}]}`), 0o644))
	err = run(t.Context(), []string{"-script", bad}, io.Discard)
	assert.ErrorContains(t, err, "unknown field")
}
