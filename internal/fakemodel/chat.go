package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// chatRequest is the part of a Chat Completions request the server reads.
type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
		Custom *struct {
			Name string `json:"name"`
		} `json:"custom"`
	} `json:"tools"`
	// Functions is the legacy pre-"tools" way of offering functions.
	Functions []struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"functions"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func parseChat(_ *http.Request, body []byte) (*request, error) {
	var in chatRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode chat request: %w", err)
	}
	msgs, _ := json.Marshal(in.Messages)
	req := &request{
		api: APIChat, model: in.Model, stream: in.Stream, messages: len(in.Messages),
		history: historyKey(msgs), texts: collectStrings(msgs, nil),
	}
	for _, t := range in.Tools {
		switch {
		case t.Function != nil:
			req.tools = append(req.tools, toolSpec{name: t.Function.Name, schema: t.Function.Parameters})
		case t.Custom != nil:
			req.tools = append(req.tools, toolSpec{name: t.Custom.Name, freeform: true})
		}
	}
	for _, f := range in.Functions {
		req.tools = append(req.tools, toolSpec{name: f.Name, schema: f.Parameters})
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type != "text" && rf.Type != "" {
		req.jsonSchema = map[string]any{}
		if rf.JSONSchema != nil {
			req.jsonSchema = nonNil(rf.JSONSchema.Schema)
		}
	}
	return req, nil
}

// openAIError is the error body shared by Chat Completions and Responses.
func openAIError(e *ErrorTurn) map[string]any {
	return map[string]any{"error": map[string]any{
		"message": e.Message, "type": errorType(e), "param": nil, "code": nil}}
}

func chatFinish(rep reply) string {
	if len(rep.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func chatUsage(rep reply) map[string]any {
	return map[string]any{
		"prompt_tokens": rep.inputTokens, "completion_tokens": rep.outputTokens,
		"total_tokens": rep.inputTokens + rep.outputTokens,
	}
}

// chatToolCall is one tool call in a message or in a stream's first delta
// for that call (then without arguments).
func chatToolCall(rep reply, i int, args string) map[string]any {
	c := rep.calls[i]
	if c.freeform {
		return map[string]any{"id": rep.ids[i], "type": "custom",
			"custom": map[string]any{"name": c.name, "input": args}}
	}
	return map[string]any{"id": rep.ids[i], "type": "function",
		"function": map[string]any{"name": c.name, "arguments": args}}
}

func writeChat(w http.ResponseWriter, req *request, rep reply) {
	if rep.err != nil {
		writeJSON(w, rep.err.Status, openAIError(rep.err))
		return
	}
	if req.stream {
		streamChat(newSSE(w), req, rep)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if rep.text != "" || len(rep.calls) == 0 {
		msg["content"] = rep.text
	}
	if len(rep.calls) > 0 {
		var calls []any
		for i, c := range rep.calls {
			calls = append(calls, chatToolCall(rep, i, encodeInput(c)))
		}
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-" + rep.msgID, "object": "chat.completion", "created": time.Now().Unix(),
		"model": req.model, "choices": []any{map[string]any{
			"index": 0, "message": msg, "finish_reason": chatFinish(rep), "logprobs": nil}},
		"usage": chatUsage(rep),
	})
}

// streamChat sends a role chunk, text deltas, per call a header chunk (id,
// name) followed by argument deltas, a finish_reason chunk, a usage chunk
// with empty choices (what stream_options.include_usage gives), and [DONE].
func streamChat(sse *sseWriter, req *request, rep reply) {
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-" + rep.msgID, "object": "chat.completion.chunk",
			"created": created, "model": req.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, piece := range chunks(rep.text, chunkSize) {
		sse.data(chunk(map[string]any{"content": piece}, nil))
	}
	for i, c := range rep.calls {
		head := chatToolCall(rep, i, "")
		head["index"] = i
		sse.data(chunk(map[string]any{"tool_calls": []any{head}}, nil))
		for _, piece := range chunks(encodeInput(c), chunkSize) {
			part := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if c.freeform {
				part = map[string]any{"index": i, "custom": map[string]any{"input": piece}}
			}
			sse.data(chunk(map[string]any{"tool_calls": []any{part}}, nil))
		}
	}
	sse.data(chunk(map[string]any{}, chatFinish(rep)))
	sse.data(map[string]any{"id": "chatcmpl-" + rep.msgID, "object": "chat.completion.chunk",
		"created": created, "model": req.model, "choices": []any{}, "usage": chatUsage(rep)})
	sse.done()
}
