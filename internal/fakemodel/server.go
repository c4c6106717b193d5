package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ExhaustedText is the answer to main requests after the last turn.
const ExhaustedText = "script exhausted"

// DefaultSideModels are the model-name patterns whose requests never consume a
// turn: the small models CLIs use for titles, routing and summaries.
var DefaultSideModels = []string{"*haiku*", "*flash-lite*"}

// Server is a scripted fake model that speaks the Anthropic Messages, OpenAI
// Chat Completions, OpenAI Responses and Gemini APIs. It is safe for
// concurrent use and implements [http.Handler].
type Server struct {
	script Script
	opts   options

	mu      sync.Mutex
	next    int // index of the next turn to answer
	seq     int
	ids     int
	logs    []RequestLog
	models  []string
	last    *lastMain
	httpSrv *http.Server
	// limits are the APIs refused until their reset (Limit); offset moves
	// the clock on (Advance).
	limits map[string]time.Time
	offset time.Duration
}

// lastMain remembers the previous main answer for RepeatIdenticalRetries.
type lastMain struct {
	history []byte
	turn    int
	answer  answer
}

// answer is a reply before it is rendered for a particular API.
type answer struct {
	text  string
	calls []toolUse
	err   *ErrorTurn
}

// New returns a server that will answer with script.
func New(script Script, opts ...Option) *Server {
	o := options{addr: "127.0.0.1:0", sideModels: DefaultSideModels, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return &Server{script: script, opts: o}
}

// Start listens and serves in the background, returning the base URL
// ("http://127.0.0.1:PORT", no trailing slash and no /v1).
func (s *Server) Start() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpSrv != nil {
		return "", errors.New("fakemodel: already started")
	}
	ln, err := net.Listen("tcp", s.opts.addr)
	if err != nil {
		return "", fmt.Errorf("fakemodel: listen: %w", err)
	}
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.httpSrv.Serve(ln) }() // returns ErrServerClosed on Close
	return "http://" + ln.Addr().String(), nil
}

// Close stops the server, dropping open connections.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.httpSrv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return srv.Close()
	}
	return nil
}

// Requests returns a copy of the request log so far.
func (s *Server) Requests() []RequestLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestLog(nil), s.logs...)
}

// Transcript renders the request log one line a request — endpoint,
// model, main or side, turn, tools offered, working directory and the
// answer — for a test to print when an agent did not do what its script
// said.
func (s *Server) Transcript() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		answer, _ := json.Marshal(r.Answer)
		fmt.Fprintf(&b, "request %d: %s %s model=%s kind=%s turn=%d tools=%d workdir=%s answer=%s\n",
			r.Seq, r.Method, r.Path, r.Model, r.Kind, r.Turn, r.Tools, r.Workdir, answer)
	}
	return b.String()
}

// TurnsUsed is how many script turns have been answered (at most len(Turns)).
func (s *Server) TurnsUsed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// ServeHTTP routes by path suffix, so base URLs with or without /v1 (or any
// other prefix a CLI adds) all work.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.handleCountTokens(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.handleGenerate(w, r, parseAnthropic, writeAnthropic)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		s.handleGenerate(w, r, parseChat, writeChat)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.handleGenerate(w, r, parseResponses, writeResponses)
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") && geminiMethod(p) == "countTokens":
		s.handleGeminiCountTokens(w, r)
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") && isGeminiGenerate(p):
		s.handleGenerate(w, r, parseGemini, writeGemini)
	case r.Method == http.MethodGet && strings.Contains(p, "/models"):
		s.handleModels(w, r)
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && p == "/":
		// Claude Code probes the base URL with HEAD / before its first request.
		s.logOther(r, http.StatusOK)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "server": "fakemodel"})
	default:
		s.logOther(r, http.StatusNotFound)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": "fakemodel: no route for " + r.Method + " " + p, "type": "not_found_error", "code": 404}})
	}
}

// parseFunc reads one API's request body; writeFunc renders an answer in it.
type (
	parseFunc func(r *http.Request, body []byte) (*request, error)
	writeFunc func(w http.ResponseWriter, req *request, a reply)
)

// reply is an answer with everything the renderers need.
type reply struct {
	answer
	ids          []string // one per call
	msgID        string
	inputTokens  int
	outputTokens int
}

func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, parse parseFunc, write writeFunc) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req, err := parse(r, body)
	if err != nil {
		s.logOther(r, http.StatusBadRequest)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "fakemodel: " + err.Error(), "type": "invalid_request_error"}})
		return
	}
	req.bodyLen = len(body)
	rep := s.decide(r, req)
	if rep.err != nil {
		for k, v := range rep.err.headers {
			w.Header().Set(k, v)
		}
	}
	write(w, req, rep)
}

// decide picks the answer for a generation request and logs it. It holds the
// lock throughout so concurrent requests take turns in a well-defined order.
func (s *Server) decide(r *http.Request, req *request) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteModel(req.model)
	entry := s.newEntry(r)
	entry.API, entry.Model, entry.Stream = req.api, req.model, req.stream
	entry.Messages, entry.Tools, entry.ToolNames = req.messages, len(req.tools), req.toolNames()
	entry.Seen = seenMarks(s.opts.watch, req.texts)

	var a answer
	if refusal := s.limited(req.api); refusal != nil {
		entry.Kind = KindLimited
		a = answer{err: refusal}
	} else if s.isMain(req) {
		entry.Kind = KindMain
		a = s.mainAnswer(req, &entry)
	} else {
		entry.Kind = KindSide
		a = answer{text: sideText(req)}
	}
	rep := s.newReply(req, a)
	entry.Status = http.StatusOK
	if a.err != nil {
		entry.Status = a.err.Status
	}
	entry.Answer = answerLog(a)
	s.record(entry)
	return rep
}

// seenMarks returns the marks that occur in one of texts.
func seenMarks(marks, texts []string) []string {
	var seen []string
	for _, m := range marks {
		for _, t := range texts {
			if strings.Contains(t, m) {
				seen = append(seen, m)
				break
			}
		}
	}
	return seen
}

// isMain: a request consumes a turn when it offers tools and does not use a
// side model. Titles, routing classifiers and summaries offer no tools.
func (s *Server) isMain(req *request) bool {
	if len(req.tools) == 0 {
		return false
	}
	for _, pat := range s.opts.sideModels {
		if matchGlob(strings.ToLower(pat), strings.ToLower(req.model)) {
			return false
		}
	}
	return true
}

func (s *Server) mainAnswer(req *request, entry *RequestLog) answer {
	mapper := toolMapper{tools: req.tools, workdir: findWorkdir(req.texts)}
	entry.Workdir = mapper.workdir
	if s.opts.repeatRetry && s.last != nil && bytes.Equal(s.last.history, req.history) {
		entry.Turn, entry.Repeat = s.last.turn, true
		return s.last.answer
	}
	var a answer
	if s.next >= len(s.script.Turns) {
		entry.Exhausted = true
		a = answer{text: ExhaustedText}
	} else {
		t := s.script.Turns[s.next]
		s.next++
		entry.Turn = s.next
		a = answer{text: t.Text, err: t.Error}
		for _, c := range t.Tools {
			a.calls = append(a.calls, mapper.mapCall(c))
		}
	}
	s.last = &lastMain{history: req.history, turn: entry.Turn, answer: a}
	return a
}

// sideText answers a side request: JSON built from the schema when it asks
// for JSON, else a short "ok".
func sideText(req *request) string {
	if req.jsonSchema == nil {
		return "ok"
	}
	v := exampleValue("", req.jsonSchema, 0)
	if _, isObj := v.(map[string]any); !isObj && len(req.jsonSchema) == 0 {
		v = map[string]any{}
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func (s *Server) newReply(req *request, a answer) reply {
	rep := reply{answer: a, msgID: s.newID("msg")}
	outChars := len(a.text)
	for _, c := range a.calls {
		rep.ids = append(rep.ids, s.newID("call"))
		outChars += len(c.name) + len(encodeInput(c))
	}
	rep.inputTokens = max(1, req.bodyLen/4)
	rep.outputTokens = max(1, outChars/4)
	return rep
}

func (s *Server) newID(prefix string) string {
	s.ids++
	return fmt.Sprintf("%s_fake%06d", prefix, s.ids)
}

func (s *Server) noteModel(m string) {
	if m == "" {
		return
	}
	for _, have := range s.models {
		if have == m {
			return
		}
	}
	s.models = append(s.models, m)
}

// encodeInput is a call's arguments as sent on the wire: JSON for function
// tools, the raw text for freeform ones.
func encodeInput(c toolUse) string {
	if c.freeform {
		if s, ok := c.input.(string); ok {
			return s
		}
	}
	b, _ := json.Marshal(c.input)
	return string(b)
}

// matchGlob matches name against a pattern where * is any run of characters.
func matchGlob(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up; nothing to do
}

// errorType is the Anthropic/OpenAI error type for an HTTP status.
func errorType(e *ErrorTurn) string {
	if e.Type != "" {
		return e.Type
	}
	switch e.Status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}
