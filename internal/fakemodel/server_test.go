package fakemodel_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

// apiScript exercises every answer shape: text with a write and a shell
// call, text only, and an error.
func apiScript() fakemodel.Script {
	return fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "I will create hello.txt, which takes a few words.", Tools: []fakemodel.ToolCall{
			{Write: &fakemodel.WriteCall{Path: "hello.txt", Content: "hello\n"}},
			{Shell: &fakemodel.ShellCall{Command: "echo hi >> hello.txt"}},
		}},
		{Text: "done <event topic=\"build.done\">tests: pass</event>"},
		{Error: &fakemodel.ErrorTurn{Status: 429, Message: "slow down"}},
	}}
}

func serve(t *testing.T, script fakemodel.Script, opts ...fakemodel.Option) (*fakemodel.Server, string) {
	t.Helper()
	srv := fakemodel.New(script, opts...)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func decodeJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v
}

type sseEvent struct {
	name string
	data map[string]any
	raw  string
}

// readSSE parses a text/event-stream body back into events, failing on any
// line that is not part of a well-formed event.
func readSSE(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var events []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			require.NotEmpty(t, cur.raw, "empty event")
			events = append(events, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.raw = strings.TrimPrefix(line, "data: ")
			if cur.raw != "[DONE]" {
				require.NoError(t, json.Unmarshal([]byte(cur.raw), &cur.data), cur.raw)
			}
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, cur.raw, "stream ended mid-event")
	return events
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }

func parseArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}

const anthropicBody = `{"model":"claude-opus-4-8","stream":%s,"max_tokens":100,
	"system":[{"type":"text","text":"Primary working directory: /w"}],
	"messages":[{"role":"user","content":"go"}],
	"tools":[{"name":"Write","input_schema":{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}},
	         {"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]}`

func body(format, stream string) string { return strings.Replace(format, "%s", stream, 1) }

func TestAnthropicStream(t *testing.T) {
	_, url := serve(t, apiScript())
	events := readSSE(t, post(t, url+"/v1/messages?beta=true", body(anthropicBody, "true")))

	require.Equal(t, "message_start", events[0].name)
	require.Equal(t, "message_stop", events[len(events)-1].name)
	type block struct{ typ, name, text string }
	var blocks []*block
	var stop string
	var outTokens float64
	for _, e := range events {
		assert.Equal(t, e.name, e.data["type"], "event name matches data.type")
		switch e.name {
		case "content_block_start":
			cb := obj(e.data["content_block"])
			name, _ := cb["name"].(string)
			blocks = append(blocks, &block{typ: cb["type"].(string), name: name})
		case "content_block_delta":
			b := blocks[int(e.data["index"].(float64))]
			d := obj(e.data["delta"])
			if d["type"] == "text_delta" {
				b.text += d["text"].(string)
			} else {
				require.Equal(t, "input_json_delta", d["type"])
				b.text += d["partial_json"].(string)
			}
		case "message_delta":
			stop = obj(e.data["delta"])["stop_reason"].(string)
			outTokens = obj(e.data["usage"])["output_tokens"].(float64)
		}
	}
	require.Len(t, blocks, 3)
	assert.Equal(t, "I will create hello.txt, which takes a few words.", blocks[0].text)
	assert.Equal(t, "Write", blocks[1].name)
	assert.Equal(t, map[string]any{"file_path": "/w/hello.txt", "content": "hello\n"}, parseArgs(t, blocks[1].text))
	assert.Equal(t, "Bash", blocks[2].name)
	assert.Equal(t, map[string]any{"command": "echo hi >> hello.txt"}, parseArgs(t, blocks[2].text))
	assert.Equal(t, "tool_use", stop)
	assert.Positive(t, outTokens)
	assert.Positive(t, obj(obj(events[0].data["message"])["usage"])["input_tokens"])
}

func TestAnthropicJSONAndError(t *testing.T) {
	_, url := serve(t, apiScript())
	first := decodeJSON(t, post(t, url+"/v1/messages", body(anthropicBody, "false")))
	assert.Equal(t, "tool_use", first["stop_reason"])
	content := list(first["content"])
	require.Len(t, content, 3)
	assert.Equal(t, "tool_use", obj(content[1])["type"])
	assert.NotEmpty(t, obj(content[1])["id"])

	second := decodeJSON(t, post(t, url+"/v1/messages", body(anthropicBody, "false")))
	assert.Equal(t, "end_turn", second["stop_reason"])
	assert.Equal(t, "done <event topic=\"build.done\">tests: pass</event>", obj(list(second["content"])[0])["text"])

	resp := post(t, url+"/v1/messages", body(anthropicBody, "true"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	errBody := decodeJSON(t, resp)
	assert.Equal(t, "error", errBody["type"])
	assert.Equal(t, map[string]any{"type": "rate_limit_error", "message": "slow down"}, errBody["error"])
}

const chatBody = `{"model":"fake-model","stream":%s,"stream_options":{"include_usage":true},
	"messages":[{"role":"system","content":"Current working directory: /w"},{"role":"user","content":"go"}],
	"tools":[{"type":"function","function":{"name":"create","parameters":{"type":"object","properties":{"path":{"type":"string"},"file_text":{"type":"string"}},"required":["path","file_text"]}}},
	         {"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}}}]}`

func TestChatStream(t *testing.T) {
	_, url := serve(t, apiScript())
	events := readSSE(t, post(t, url+"/v1/chat/completions", body(chatBody, "true")))

	require.Equal(t, "[DONE]", events[len(events)-1].raw)
	var text, finish string
	type call struct{ id, name, args string }
	calls := map[int]*call{}
	var usage map[string]any
	for _, e := range events[:len(events)-1] {
		assert.Equal(t, "chat.completion.chunk", e.data["object"])
		if u := obj(e.data["usage"]); u != nil {
			usage = u
			assert.Empty(t, list(e.data["choices"]), "the usage chunk has no choices")
			continue
		}
		choice := obj(list(e.data["choices"])[0])
		if f, ok := choice["finish_reason"].(string); ok {
			finish = f
		}
		delta := obj(choice["delta"])
		if c, ok := delta["content"].(string); ok {
			text += c
		}
		for _, tc := range list(delta["tool_calls"]) {
			d := obj(tc)
			i := int(d["index"].(float64))
			if calls[i] == nil {
				calls[i] = &call{}
			}
			fn := obj(d["function"])
			if id, ok := d["id"].(string); ok {
				calls[i].id, calls[i].name = id, fn["name"].(string)
			}
			calls[i].args += fn["arguments"].(string)
		}
	}
	assert.Equal(t, "I will create hello.txt, which takes a few words.", text)
	assert.Equal(t, "tool_calls", finish)
	require.Len(t, calls, 2)
	assert.Equal(t, "create", calls[0].name)
	assert.Equal(t, map[string]any{"path": "/w/hello.txt", "file_text": "hello\n"}, parseArgs(t, calls[0].args))
	assert.Equal(t, "bash", calls[1].name)
	assert.Equal(t, map[string]any{"command": "echo hi >> hello.txt", "description": "scripted step"}, parseArgs(t, calls[1].args))
	assert.NotEqual(t, calls[0].id, calls[1].id)
	assert.Positive(t, usage["prompt_tokens"])
	assert.Equal(t, usage["prompt_tokens"].(float64)+usage["completion_tokens"].(float64), usage["total_tokens"])
}

func TestChatJSONAndError(t *testing.T) {
	_, url := serve(t, apiScript())
	first := decodeJSON(t, post(t, url+"/v1/chat/completions", body(chatBody, "false")))
	choice := obj(list(first["choices"])[0])
	assert.Equal(t, "tool_calls", choice["finish_reason"])
	calls := list(obj(choice["message"])["tool_calls"])
	require.Len(t, calls, 2)
	assert.Equal(t, "create", obj(obj(calls[0])["function"])["name"])

	second := decodeJSON(t, post(t, url+"/v1/chat/completions", body(chatBody, "false")))
	choice = obj(list(second["choices"])[0])
	assert.Equal(t, "stop", choice["finish_reason"])
	assert.Contains(t, obj(choice["message"])["content"], "build.done")

	resp := post(t, url+"/v1/chat/completions", body(chatBody, "true"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "slow down", obj(decodeJSON(t, resp)["error"])["message"])
}

const responsesBody = `{"model":"gpt-5.5","stream":%s,"instructions":"be brief",
	"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
	         {"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}],
	"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}},
	         {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},
	         {"type":"web_search"}]}`

func TestResponsesStream(t *testing.T) {
	srv, url := serve(t, apiScript())
	events := readSSE(t, post(t, url+"/v1/responses", body(responsesBody, "true")))

	require.Equal(t, "response.created", events[0].name)
	last := events[len(events)-1]
	require.Equal(t, "response.completed", last.name)
	deltas := map[string]string{}
	var done []map[string]any
	for i, e := range events {
		assert.Equal(t, e.name, e.data["type"])
		assert.Equal(t, float64(i), e.data["sequence_number"])
		switch e.name {
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			deltas[e.data["item_id"].(string)] += e.data["delta"].(string)
		case "response.function_call_arguments.done":
			assert.Equal(t, e.data["arguments"], deltas[e.data["item_id"].(string)])
		case "response.custom_tool_call_input.done":
			assert.Equal(t, e.data["input"], deltas[e.data["item_id"].(string)])
		case "response.output_item.done":
			done = append(done, obj(e.data["item"]))
		}
	}
	require.Len(t, done, 3)
	assert.Equal(t, "message", done[0]["type"])
	assert.Equal(t, "I will create hello.txt, which takes a few words.", obj(list(done[0]["content"])[0])["text"])
	assert.Equal(t, deltas[done[0]["id"].(string)], obj(list(done[0]["content"])[0])["text"])
	assert.Equal(t, "custom_tool_call", done[1]["type"])
	assert.Equal(t, "apply_patch", done[1]["name"])
	assert.Equal(t, "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n", done[1]["input"])
	assert.NotEmpty(t, done[1]["call_id"])
	assert.Equal(t, "function_call", done[2]["type"])
	assert.Equal(t, map[string]any{"cmd": "echo hi >> hello.txt"}, parseArgs(t, done[2]["arguments"].(string)))

	completed := obj(last.data["response"])
	assert.Equal(t, "completed", completed["status"])
	assert.Len(t, list(completed["output"]), 3)
	assert.Positive(t, obj(completed["usage"])["input_tokens"])
	assert.Positive(t, obj(completed["usage"])["output_tokens"])

	reqs := srv.Requests()
	assert.Equal(t, []string{"exec_command", "apply_patch", "web_search"}, reqs[0].ToolNames)
	assert.Equal(t, 2, reqs[0].Messages)
	assert.Equal(t, "/w", reqs[0].Workdir)
}

func TestResponsesJSONAndError(t *testing.T) {
	_, url := serve(t, apiScript())
	post(t, url+"/v1/responses", body(responsesBody, "false"))
	second := decodeJSON(t, post(t, url+"/v1/responses", body(responsesBody, "false")))
	assert.Equal(t, "completed", second["status"])
	out := list(second["output"])
	require.Len(t, out, 1)
	assert.Contains(t, obj(list(obj(out[0])["content"])[0])["text"], "build.done")

	resp := post(t, url+"/v1/responses", body(responsesBody, "true"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "rate_limit_error", obj(decodeJSON(t, resp)["error"])["type"])
}

const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"- **Workspace Directories:**\n  - /w\n"},{"text":"go"}]}],
	"systemInstruction":{"parts":[{"text":"You are Gemini CLI."}]},
	"tools":[{"functionDeclarations":[
	  {"name":"write_file","parametersJsonSchema":{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}},
	  {"name":"run_shell_command","parameters":{"type":"OBJECT","properties":{"command":{"type":"STRING"}},"required":["command"]}}]}]}`

func TestGeminiStream(t *testing.T) {
	_, url := serve(t, apiScript())
	events := readSSE(t, post(t, url+"/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse", geminiBody))

	var text string
	var calls []map[string]any
	for i, e := range events {
		cand := obj(list(e.data["candidates"])[0])
		for _, p := range list(obj(cand["content"])["parts"]) {
			if s, ok := obj(p)["text"].(string); ok {
				text += s
			}
			if fc := obj(obj(p)["functionCall"]); fc != nil {
				calls = append(calls, fc)
			}
		}
		if i == len(events)-1 {
			assert.Equal(t, "STOP", cand["finishReason"], "the last chunk carries the finish reason")
			assert.Positive(t, obj(e.data["usageMetadata"])["totalTokenCount"])
		} else {
			assert.Nil(t, cand["finishReason"])
		}
	}
	assert.Equal(t, "I will create hello.txt, which takes a few words.", text)
	require.Len(t, calls, 2)
	assert.Equal(t, map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/w/hello.txt", "content": "hello\n"}}, calls[0])
	assert.Equal(t, map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "echo hi >> hello.txt"}}, calls[1])
}

func TestGeminiJSONAndError(t *testing.T) {
	srv, url := serve(t, apiScript())
	post(t, url+"/v1beta/models/gemini-3.8-flash:generateContent", geminiBody)
	second := decodeJSON(t, post(t, url+"/v1beta/models/gemini-3.8-flash:generateContent", geminiBody))
	cand := obj(list(second["candidates"])[0])
	assert.Equal(t, "STOP", cand["finishReason"])
	assert.Contains(t, obj(list(obj(cand["content"])["parts"])[0])["text"], "build.done")

	resp := post(t, url+"/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse", geminiBody)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, map[string]any{"code": float64(429), "message": "slow down", "status": "RESOURCE_EXHAUSTED"}, decodeJSON(t, resp)["error"])

	reqs := srv.Requests()
	assert.Equal(t, "gemini-3.8-flash", reqs[0].Model)
	assert.Equal(t, fakemodel.APIGemini, reqs[0].API)
	assert.Equal(t, []int{1, 2, 3}, []int{reqs[0].Turn, reqs[1].Turn, reqs[2].Turn})
	assert.Equal(t, 429, reqs[2].Status)
}

func TestSideRequests(t *testing.T) {
	cases := []struct {
		name, path, body, want string
	}{
		{"anthropic without tools", "/v1/messages",
			`{"model":"claude-opus-4-8","messages":[{"role":"user","content":"title?"}]}`, "ok"},
		{"anthropic haiku with tools", "/v1/messages",
			`{"model":"claude-haiku-4-5","messages":[],"tools":[{"name":"Bash","input_schema":{}}]}`, "ok"},
		{"anthropic output_format", "/v1/messages",
			`{"model":"claude-haiku-4-5","messages":[],"output_format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}}}}}`,
			`{"title":"ok"}`},
		{"chat without tools", "/v1/chat/completions",
			`{"model":"fake-model","messages":[{"role":"user","content":"title?"}],"tools":[]}`, "ok"},
		{"chat response_format json_schema", "/v1/chat/completions",
			`{"model":"fake-model","messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"n":{"type":"integer","minimum":3}}}}}}`,
			`{"n":3}`},
		{"chat response_format json_object", "/v1/chat/completions",
			`{"model":"fake-model","messages":[],"response_format":{"type":"json_object"}}`, `{}`},
		{"responses text.format", "/v1/responses",
			`{"model":"gpt-5.5","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object","properties":{"kind":{"type":"string","enum":["a","b"]}}}}}}`,
			`{"kind":"a"}`},
		{"gemini router", "/v1beta/models/gemini-3.5-flash-lite:generateContent",
			`{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"complexity_reasoning":{"type":"string"},"complexity_score":{"type":"integer","minimum":1,"maximum":100}}}}}`,
			`{"complexity_reasoning":"ok","complexity_score":1}`},
		{"gemini next speaker (responseSchema)", "/v1beta/models/gemini-3.8-flash:generateContent",
			`{"contents":[],"generationConfig":{"responseSchema":{"type":"OBJECT","properties":{"reasoning":{"type":"STRING"},"next_speaker":{"type":"STRING","enum":["model","user"]}}}}}`,
			`{"next_speaker":"user","reasoning":"ok"}`},
		{"gemini mime type only", "/v1beta/models/gemini-3.8-flash:generateContent",
			`{"contents":[],"generationConfig":{"responseMimeType":"application/json"}}`, `{}`},
		{"gemini flash-lite with tools", "/v1beta/models/gemini-2.5-flash-lite:generateContent",
			`{"contents":[],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`, "ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := serve(t, apiScript())
			resp := post(t, url+tc.path, tc.body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tc.want, answerText(t, decodeJSON(t, resp)))
			assert.Equal(t, 0, srv.TurnsUsed(), "side requests consume no turn")
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, fakemodel.KindSide, reqs[0].Kind)
			assert.Equal(t, 0, reqs[0].Turn)
		})
	}
}

// answerText pulls the text out of a non-streamed answer of any API.
func answerText(t *testing.T, v map[string]any) string {
	t.Helper()
	switch {
	case v["type"] == "message":
		return obj(list(v["content"])[0])["text"].(string)
	case v["object"] == "chat.completion":
		return obj(obj(list(v["choices"])[0])["message"])["content"].(string)
	case v["object"] == "response":
		return obj(list(obj(list(v["output"])[0])["content"])[0])["text"].(string)
	case v["candidates"] != nil:
		return obj(list(obj(obj(list(v["candidates"])[0])["content"])["parts"])[0])["text"].(string)
	}
	t.Fatalf("unknown answer shape: %v", v)
	return ""
}

func TestWithSideModels(t *testing.T) {
	srv, url := serve(t, apiScript(), fakemodel.WithSideModels("*-mini"))
	post(t, url+"/v1/chat/completions", strings.Replace(body(chatBody, "false"), `"fake-model"`, `"gpt-5-mini"`, 1))
	post(t, url+"/v1/messages", strings.Replace(body(anthropicBody, "false"), "claude-opus-4-8", "claude-haiku-4-5", 1))
	reqs := srv.Requests()
	assert.Equal(t, fakemodel.KindSide, reqs[0].Kind)
	assert.Equal(t, fakemodel.KindMain, reqs[1].Kind, "haiku is main once the patterns are replaced")
}

// TestTurnsCarryOver: a second agent session (a fresh conversation) picks up
// where the first stopped, and a session past the end gets "script exhausted".
func TestTurnsCarryOver(t *testing.T) {
	srv, url := serve(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Tools: []fakemodel.ToolCall{{Shell: &fakemodel.ShellCall{Command: "true"}}}},
		{Text: "iteration 1 done"},
		{Text: "iteration 2 done"},
	}})
	session := func(msgs string) string {
		b := strings.Replace(body(chatBody, "false"), `[{"role":"system","content":"Current working directory: /w"},{"role":"user","content":"go"}]`, msgs, 1)
		v := decodeJSON(t, post(t, url+"/v1/chat/completions", b))
		msg := obj(obj(list(v["choices"])[0])["message"])
		if calls := list(msg["tool_calls"]); len(calls) > 0 {
			return "call " + obj(obj(calls[0])["function"])["name"].(string)
		}
		return msg["content"].(string)
	}
	first := `[{"role":"user","content":"Do the next task"}]`
	assert.Equal(t, "call bash", session(first))
	assert.Equal(t, "iteration 1 done", session(`[{"role":"user","content":"Do the next task"},{"role":"assistant","tool_calls":[]},{"role":"tool","content":""}]`))
	assert.Equal(t, "iteration 2 done", session(first), "a fresh session continues the script")
	assert.Equal(t, fakemodel.ExhaustedText, session(first))

	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []int{1, 2, 3, 0}, []int{reqs[0].Turn, reqs[1].Turn, reqs[2].Turn, reqs[3].Turn})
	assert.True(t, reqs[3].Exhausted)
	assert.Equal(t, fakemodel.KindMain, reqs[3].Kind)
	assert.Equal(t, 3, srv.TurnsUsed())
}

func TestRepeatIdenticalRetries(t *testing.T) {
	script := fakemodel.Script{Turns: []fakemodel.Turn{{Text: "one"}, {Text: "two"}}}
	req := body(anthropicBody, "false")

	srv, url := serve(t, script, fakemodel.RepeatIdenticalRetries())
	assert.Equal(t, "one", answerText(t, decodeJSON(t, post(t, url+"/v1/messages", req))))
	assert.Equal(t, "one", answerText(t, decodeJSON(t, post(t, url+"/v1/messages", req))), "a retry gets the same answer")
	different := strings.Replace(req, `"content":"go"`, `"content":"go on"`, 1)
	assert.Equal(t, "two", answerText(t, decodeJSON(t, post(t, url+"/v1/messages", different))))
	reqs := srv.Requests()
	assert.Equal(t, []int{1, 1, 2}, []int{reqs[0].Turn, reqs[1].Turn, reqs[2].Turn})
	assert.True(t, reqs[1].Repeat)

	_, url = serve(t, script)
	post(t, url+"/v1/messages", req)
	assert.Equal(t, "two", answerText(t, decodeJSON(t, post(t, url+"/v1/messages", req))), "off by default")
}

func TestConcurrentRequestsTakeDistinctTurns(t *testing.T) {
	const n = 24
	var script fakemodel.Script
	for i := 0; i < n; i++ {
		script.Turns = append(script.Turns, fakemodel.Turn{Text: "t"})
	}
	srv, url := serve(t, script)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body(chatBody, "true")))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	var turns []int
	for _, r := range srv.Requests() {
		turns = append(turns, r.Turn)
	}
	sort.Ints(turns)
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	assert.Equal(t, want, turns)
}

func TestLogWriter(t *testing.T) {
	var buf bytes.Buffer
	srv, url := serve(t, apiScript(), fakemodel.WithLog(&buf))
	post(t, url+"/v1/messages", body(anthropicBody, "false"))
	post(t, url+"/v1/messages/count_tokens", `{"messages":[]}`)

	var logged []fakemodel.RequestLog
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var r fakemodel.RequestLog
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		logged = append(logged, r)
	}
	require.Len(t, logged, 2)
	mem := srv.Requests()
	assert.Equal(t, mem[0].Answer, logged[0].Answer)
	assert.Equal(t, []string{"Write", "Bash"}, logged[0].ToolNames)
	assert.Equal(t, "/w", logged[0].Workdir)
	assert.Equal(t, []fakemodel.ToolCallLog{
		{Name: "Write", Input: map[string]any{"file_path": "/w/hello.txt", "content": "hello\n"}},
		{Name: "Bash", Input: map[string]any{"command": "echo hi >> hello.txt"}},
	}, logged[0].Answer.ToolCalls)
	assert.Equal(t, fakemodel.KindOther, logged[1].Kind)
}

func TestProbes(t *testing.T) {
	srv, url := serve(t, apiScript())
	get := func(path string) map[string]any {
		resp, err := http.Get(url + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		var v map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return v
	}
	assert.Equal(t, "fake-model", obj(list(get("/v1/models")["data"])[0])["id"])
	assert.Equal(t, "models/fake-model", obj(list(get("/v1beta/models")["models"])[0])["name"])
	assert.Equal(t, "gpt-5.5", get("/v1/models/gpt-5.5")["id"])
	assert.Equal(t, true, get("/")["ok"])

	tokens := decodeJSON(t, post(t, url+"/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"12345678"}]}`))
	assert.Positive(t, tokens["input_tokens"])
	gtokens := decodeJSON(t, post(t, url+"/v1beta/models/gemini-3.8-flash:countTokens", `{"contents":[]}`))
	assert.Positive(t, gtokens["totalTokens"])

	resp := post(t, url+"/v2/unknown", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	bad := post(t, url+"/v1/messages", `not json`)
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode)
	for _, r := range srv.Requests() {
		assert.Equal(t, fakemodel.KindOther, r.Kind, r.Path)
	}
	assert.Equal(t, 0, srv.TurnsUsed())
}

func TestStartAndClose(t *testing.T) {
	srv := fakemodel.New(apiScript())
	url, err := srv.Start()
	require.NoError(t, err)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, url)
	_, err = srv.Start()
	assert.Error(t, err, "a second Start fails")

	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body(chatBody, "false")))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, srv.Close())
	_, err = http.Get(url + "/v1/models")
	assert.Error(t, err, "closed")
}

func TestTranscriptHasALinePerRequest(t *testing.T) {
	srv := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{{Text: "hi"}}})
	base, err := srv.Start()
	require.NoError(t, err)
	defer srv.Close()
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}`
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_ = resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(srv.Transcript()), "\n")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "request 1: POST /v1/messages model=m kind=main turn=1")
}

// TestWatchListsTheMarksAPromptHolds: WithWatch says which marks each
// request's prompt held, whichever API it came through, system prompt
// included, without consuming or changing anything.
func TestWatchListsTheMarksAPromptHolds(t *testing.T) {
	srv, url := serve(t, apiScript(), fakemodel.WithWatch("Primary working directory", "go", "be brief", "absent"))
	post(t, url+"/v1/messages", body(anthropicBody, "false"))
	post(t, url+"/v1/responses", body(responsesBody, "false"))
	post(t, url+"/v1/messages/count_tokens", `{"messages":[]}`)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"Primary working directory", "go"}, reqs[0].Seen)
	assert.Equal(t, []string{"go", "be brief"}, reqs[1].Seen)
	assert.Empty(t, reqs[2].Seen, "not a generation request")
	assert.Equal(t, 2, srv.TurnsUsed(), "watching consumes nothing")
}
