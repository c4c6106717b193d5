package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is the part of a generateContent request the server reads.
type geminiRequest struct {
	Contents          []json.RawMessage `json:"contents"`
	SystemInstruction json.RawMessage   `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string         `json:"name"`
			Parameters           map[string]any `json:"parameters"`
			ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseSchema     map[string]any `json:"responseSchema"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

// geminiMethod is the method after the colon in .../models/MODEL:METHOD.
func geminiMethod(path string) string {
	i := strings.LastIndex(path, ":")
	if i < 0 || i < strings.LastIndex(path, "/") {
		return ""
	}
	return path[i+1:]
}

func isGeminiGenerate(path string) bool {
	m := geminiMethod(path)
	return m == "generateContent" || m == "streamGenerateContent"
}

// geminiModel is MODEL in .../models/MODEL:METHOD.
func geminiModel(path string) string {
	rest := path[strings.LastIndex(path, "/models/")+len("/models/"):]
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func parseGemini(r *http.Request, body []byte) (*request, error) {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode gemini request: %w", err)
	}
	contents, _ := json.Marshal(in.Contents)
	req := &request{
		api: APIGemini, model: geminiModel(r.URL.Path),
		stream:   geminiMethod(r.URL.Path) == "streamGenerateContent",
		messages: len(in.Contents),
		history:  historyKey(in.SystemInstruction, contents),
		texts:    collectStrings(contents, collectStrings(in.SystemInstruction, nil)),
	}
	for _, t := range in.Tools {
		for _, fd := range t.FunctionDeclarations {
			schema := fd.ParametersJSONSchema
			if schema == nil {
				schema = fd.Parameters
			}
			req.tools = append(req.tools, toolSpec{name: fd.Name, schema: schema})
		}
	}
	if gc := in.GenerationConfig; gc != nil {
		switch {
		case gc.ResponseJSONSchema != nil:
			req.jsonSchema = gc.ResponseJSONSchema
		case gc.ResponseSchema != nil:
			req.jsonSchema = gc.ResponseSchema
		case strings.Contains(gc.ResponseMimeType, "json"):
			req.jsonSchema = map[string]any{}
		}
	}
	return req, nil
}

// geminiStatus is the google.rpc status name for an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

func geminiUsage(rep reply) map[string]any {
	return map[string]any{"promptTokenCount": rep.inputTokens, "candidatesTokenCount": rep.outputTokens,
		"totalTokenCount": rep.inputTokens + rep.outputTokens}
}

// geminiResponse is one GenerateContentResponse; the last one of a stream
// carries finishReason and usage, which Gemini CLI requires (a stream without
// a finish reason counts as invalid and is retried).
func geminiResponse(req *request, rep reply, parts []any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": req.model, "responseId": rep.msgID}
	if last {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = geminiUsage(rep)
	}
	return resp
}

func geminiCallParts(rep reply) []any {
	var parts []any
	for _, c := range rep.calls {
		args := c.input
		if c.freeform {
			args = map[string]any{"input": c.input}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.name, "args": args}})
	}
	return parts
}

func writeGemini(w http.ResponseWriter, req *request, rep reply) {
	if rep.err != nil {
		writeJSON(w, rep.err.Status, map[string]any{"error": map[string]any{
			"code": rep.err.Status, "message": rep.err.Message, "status": geminiStatus(rep.err.Status)}})
		return
	}
	if !req.stream {
		var parts []any
		if rep.text != "" || len(rep.calls) == 0 {
			parts = append(parts, map[string]any{"text": rep.text})
		}
		writeJSON(w, http.StatusOK, geminiResponse(req, rep, append(parts, geminiCallParts(rep)...), true))
		return
	}
	streamGemini(newSSE(w), req, rep)
}

// streamGemini sends text chunks, then the function calls together with the
// finish reason and usage in the final chunk.
func streamGemini(sse *sseWriter, req *request, rep reply) {
	pieces := chunks(rep.text, chunkSize)
	callParts := geminiCallParts(rep)
	if len(callParts) == 0 && len(pieces) > 0 {
		// Keep the last text piece for the final chunk so it is never empty.
		for _, p := range pieces[:len(pieces)-1] {
			sse.data(geminiResponse(req, rep, []any{map[string]any{"text": p}}, false))
		}
		sse.data(geminiResponse(req, rep, []any{map[string]any{"text": pieces[len(pieces)-1]}}, true))
		return
	}
	for _, p := range pieces {
		sse.data(geminiResponse(req, rep, []any{map[string]any{"text": p}}, false))
	}
	if len(callParts) == 0 {
		callParts = []any{map[string]any{"text": ""}}
	}
	sse.data(geminiResponse(req, rep, callParts, true))
}
