package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicRequest is the part of a Messages API request the server reads.
type anthropicRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	System   json.RawMessage   `json:"system"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Name        string         `json:"name"`
		Type        string         `json:"type"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
	OutputFormat *jsonFormat `json:"output_format"`
	OutputConfig *struct {
		Format *jsonFormat `json:"format"`
	} `json:"output_config"`
}

// jsonFormat is a structured-output request: {"type":"json_schema","schema":{…}}.
type jsonFormat struct {
	Type   string         `json:"type"`
	Schema map[string]any `json:"schema"`
}

func parseAnthropic(_ *http.Request, body []byte) (*request, error) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode anthropic request: %w", err)
	}
	msgs, _ := json.Marshal(in.Messages)
	req := &request{
		api: APIAnthropic, model: in.Model, stream: in.Stream, messages: len(in.Messages),
		history: historyKey(in.System, msgs),
		texts:   collectStrings(msgs, collectStrings(in.System, nil)),
	}
	for _, t := range in.Tools {
		// Server tools (web_search_20250305, …) have a type and no schema;
		// they are offered tools all the same.
		req.tools = append(req.tools, toolSpec{name: t.Name, schema: t.InputSchema})
	}
	format := in.OutputFormat
	if format == nil && in.OutputConfig != nil {
		format = in.OutputConfig.Format
	}
	if format != nil {
		req.jsonSchema = nonNil(format.Schema)
	}
	return req, nil
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// anthropicContent is the message content: text first, then tool_use blocks.
func anthropicContent(rep reply) []map[string]any {
	var blocks []map[string]any
	if rep.text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": rep.text})
	}
	for i, c := range rep.calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": rep.ids[i], "name": c.name, "input": objectInput(c)})
	}
	if blocks == nil {
		// An empty content list upsets some clients; an empty text block is
		// what the real API sends when the model says nothing.
		blocks = []map[string]any{{"type": "text", "text": ""}}
	}
	return blocks
}

// objectInput is a call's input as a JSON object: Anthropic tool inputs are
// always objects, so raw text from a "call" turn is wrapped as {"input": …}.
func objectInput(c toolUse) any {
	if s, ok := c.input.(string); ok {
		return map[string]any{"input": s}
	}
	return c.input
}

func anthropicStop(rep reply) string {
	if len(rep.calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func anthropicUsage(rep reply) map[string]any {
	return map[string]any{
		"input_tokens": rep.inputTokens, "output_tokens": rep.outputTokens,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

func writeAnthropic(w http.ResponseWriter, req *request, rep reply) {
	w.Header().Set("request-id", "req_"+rep.msgID)
	if rep.err != nil {
		writeJSON(w, rep.err.Status, map[string]any{"type": "error", "error": map[string]any{
			"type": errorType(rep.err), "message": rep.err.Message}})
		return
	}
	if !req.stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": rep.msgID, "type": "message", "role": "assistant", "model": req.model,
			"content": anthropicContent(rep), "stop_reason": anthropicStop(rep), "stop_sequence": nil,
			"usage": anthropicUsage(rep),
		})
		return
	}
	streamAnthropic(newSSE(w), req, rep)
}

// streamAnthropic emits message_start, one content block per text/tool_use
// (start, deltas, stop), message_delta with the stop reason and output
// usage, and message_stop — the sequence the Anthropic SDKs assemble.
func streamAnthropic(sse *sseWriter, req *request, rep reply) {
	startUsage := anthropicUsage(rep)
	startUsage["output_tokens"] = 1
	sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": rep.msgID, "type": "message", "role": "assistant", "model": req.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	index := 0
	if rep.text != "" || len(rep.calls) == 0 {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, piece := range chunks(rep.text, chunkSize) {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": piece}})
		}
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for i, c := range rep.calls {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": rep.ids[i], "name": c.name, "input": map[string]any{}}})
		for _, piece := range chunks(mustJSON(objectInput(c)), chunkSize) {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	sse.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(rep), "stop_sequence": nil},
		"usage": anthropicUsage(rep)})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
}
