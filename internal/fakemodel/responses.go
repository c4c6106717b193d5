package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesRequest is the part of a Responses API request the server reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions json.RawMessage `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Type       string         `json:"type"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"tools"`
	Text *struct {
		Format *jsonFormat `json:"format"`
	} `json:"text"`
}

func parseResponses(_ *http.Request, body []byte) (*request, error) {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode responses request: %w", err)
	}
	req := &request{
		api: APIResponses, model: in.Model, stream: in.Stream, messages: countItems(in.Input),
		history: historyKey(in.Instructions, in.Input),
		texts:   collectStrings(in.Input, collectStrings(in.Instructions, nil)),
	}
	for _, t := range in.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // built-ins such as web_search have only a type
		}
		req.tools = append(req.tools, toolSpec{name: name, freeform: t.Type == "custom", schema: t.Parameters})
	}
	if in.Text != nil && in.Text.Format != nil && in.Text.Format.Type != "text" && in.Text.Format.Type != "" {
		req.jsonSchema = nonNil(in.Text.Format.Schema)
	}
	return req, nil
}

// countItems is the number of input items; a plain string input is one.
func countItems(raw json.RawMessage) int {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) == nil {
		return len(items)
	}
	if len(raw) > 0 && string(raw) != "null" {
		return 1
	}
	return 0
}

// responsesItems are the output items: a message with the text, then one
// function_call (or custom_tool_call for freeform tools) per call.
func responsesItems(rep reply) []map[string]any {
	var items []map[string]any
	if rep.text != "" || len(rep.calls) == 0 {
		items = append(items, map[string]any{"id": rep.msgID, "type": "message", "status": "completed",
			"role": "assistant", "content": []any{outputText(rep.text)}})
	}
	for i, c := range rep.calls {
		id := fmt.Sprintf("fc_%s_%d", strings.TrimPrefix(rep.msgID, "msg_"), i)
		if c.freeform {
			items = append(items, map[string]any{"id": id, "type": "custom_tool_call", "status": "completed",
				"call_id": rep.ids[i], "name": c.name, "input": encodeInput(c)})
			continue
		}
		items = append(items, map[string]any{"id": id, "type": "function_call", "status": "completed",
			"call_id": rep.ids[i], "name": c.name, "arguments": encodeInput(c)})
	}
	return items
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

func responsesObject(req *request, rep reply, status string, output []map[string]any) map[string]any {
	obj := map[string]any{
		"id": "resp_" + rep.msgID, "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": req.model, "output": output,
	}
	if status == "completed" {
		obj["usage"] = map[string]any{
			"input_tokens": rep.inputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": rep.outputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": rep.inputTokens + rep.outputTokens,
		}
	}
	return obj
}

func writeResponses(w http.ResponseWriter, req *request, rep reply) {
	if rep.err != nil {
		writeJSON(w, rep.err.Status, openAIError(rep.err))
		return
	}
	if !req.stream {
		writeJSON(w, http.StatusOK, responsesObject(req, rep, "completed", responsesItems(rep)))
		return
	}
	streamResponses(&responsesStream{sse: newSSE(w)}, req, rep)
}

// responsesStream numbers events, as every Responses stream event carries a
// sequence_number.
type responsesStream struct {
	sse *sseWriter
	seq int
}

func (s *responsesStream) emit(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	s.sse.event(typ, fields)
}

// streamResponses emits response.created, then per output item
// output_item.added, its deltas and output_item.done, then response.completed
// with usage. Codex builds its history from the output_item.done items.
func streamResponses(s *responsesStream, req *request, rep reply) {
	s.emit("response.created", map[string]any{"response": responsesObject(req, rep, "in_progress", []map[string]any{})})
	s.emit("response.in_progress", map[string]any{"response": responsesObject(req, rep, "in_progress", []map[string]any{})})
	items := responsesItems(rep)
	for idx, item := range items {
		switch item["type"] {
		case "message":
			streamResponsesMessage(s, idx, item, rep.text)
		case "custom_tool_call":
			streamResponsesCall(s, idx, item, "input", "response.custom_tool_call_input")
		default:
			streamResponsesCall(s, idx, item, "arguments", "response.function_call_arguments")
		}
	}
	s.emit("response.completed", map[string]any{"response": responsesObject(req, rep, "completed", items)})
}

func streamResponsesMessage(s *responsesStream, idx int, item map[string]any, text string) {
	id := item["id"]
	added := copyMap(item)
	added["status"], added["content"] = "in_progress", []any{}
	s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": added})
	s.emit("response.content_part.added", map[string]any{"item_id": id, "output_index": idx,
		"content_index": 0, "part": outputText("")})
	for _, piece := range chunks(text, chunkSize) {
		s.emit("response.output_text.delta", map[string]any{"item_id": id, "output_index": idx,
			"content_index": 0, "delta": piece, "logprobs": []any{}})
	}
	s.emit("response.output_text.done", map[string]any{"item_id": id, "output_index": idx,
		"content_index": 0, "text": text, "logprobs": []any{}})
	s.emit("response.content_part.done", map[string]any{"item_id": id, "output_index": idx,
		"content_index": 0, "part": outputText(text)})
	s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
}

// streamResponsesCall streams a function call's arguments or a custom tool
// call's input (field) with the matching <prefix>.delta/.done events.
func streamResponsesCall(s *responsesStream, idx int, item map[string]any, field, prefix string) {
	id := item["id"]
	full, _ := item[field].(string)
	added := copyMap(item)
	added["status"], added[field] = "in_progress", ""
	s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": added})
	for _, piece := range chunks(full, chunkSize) {
		s.emit(prefix+".delta", map[string]any{"item_id": id, "output_index": idx, "delta": piece})
	}
	s.emit(prefix+".done", map[string]any{"item_id": id, "output_index": idx, field: full})
	s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
