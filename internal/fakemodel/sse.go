package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// sseWriter writes server-sent events and flushes each one, so CLIs see a
// real stream rather than one buffered blob.
type sseWriter struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w}
}

// event writes a named event (Anthropic, Responses).
func (s *sseWriter) event(name string, v any) {
	s.write("event: " + name + "\ndata: " + mustJSON(v) + "\n\n")
}

// data writes an unnamed event (Chat Completions, Gemini).
func (s *sseWriter) data(v any) { s.write("data: " + mustJSON(v) + "\n\n") }

func (s *sseWriter) done() { s.write("data: [DONE]\n\n") }

func (s *sseWriter) write(text string) {
	_, _ = io.WriteString(s.w, text) // a client that hung up is not our problem
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("fakemodel: marshal: " + err.Error()) // only our own maps are marshalled
	}
	return string(b)
}

// chunks splits text into pieces of about n bytes at rune boundaries, so
// clients exercise their delta assembly.
func chunks(text string, n int) []string {
	if text == "" {
		return nil
	}
	var out []string
	var b strings.Builder
	for _, r := range text {
		b.WriteRune(r)
		if b.Len() >= n {
			out = append(out, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

const chunkSize = 24

// handleModels answers model-list probes with the models seen so far plus a
// placeholder, in a shape that satisfies both Anthropic/OpenAI ("data") and
// Gemini ("models") clients. A single model (GET .../models/NAME) gets its own
// description.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	names := append([]string{"fake-model"}, s.models...)
	s.mu.Unlock()
	s.logOther(r, http.StatusOK)

	if i := strings.Index(r.URL.Path, "/models/"); i >= 0 {
		name := strings.TrimPrefix(r.URL.Path[i:], "/models/")
		info := modelInfo(name)
		for k, v := range geminiModelInfo(name) {
			info[k] = v // one object that reads as either API's model
		}
		writeJSON(w, http.StatusOK, info)
		return
	}
	var data, models []any
	for _, n := range names {
		data = append(data, modelInfo(n))
		models = append(models, geminiModelInfo(n))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "has_more": false,
		"first_id": names[0], "last_id": names[len(names)-1],
		"models": models,
	})
}

func modelInfo(name string) map[string]any {
	return map[string]any{
		"id": name, "object": "model", "type": "model", "display_name": name,
		"created": 1700000000, "created_at": time.Unix(1700000000, 0).UTC().Format(time.RFC3339),
		"owned_by": "fakemodel",
	}
}

func geminiModelInfo(name string) map[string]any {
	return map[string]any{
		"name": "models/" + name, "displayName": name, "version": "1",
		"inputTokenLimit": 1000000, "outputTokenLimit": 65536,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
	}
}

// handleCountTokens answers Anthropic's /v1/messages/count_tokens.
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	n := bodyTokens(r)
	s.logOther(r, http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
}

// handleGeminiCountTokens answers Gemini's models/M:countTokens.
func (s *Server) handleGeminiCountTokens(w http.ResponseWriter, r *http.Request) {
	n := bodyTokens(r)
	s.logOther(r, http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]any{"totalTokens": n})
}

func bodyTokens(r *http.Request) int {
	n, _ := io.Copy(io.Discard, r.Body)
	return max(1, int(n)/4)
}
