package fakemodel

import (
	"encoding/json"
	"net/http"
	"time"
)

// Request kinds in [RequestLog].Kind.
const (
	KindMain  = "main"  // consumed (or repeated) a script turn
	KindSide  = "side"  // a generation request that consumes nothing
	KindOther = "other" // model lists, token counts, unknown paths
)

// RequestLog records one request and how it was answered.
type RequestLog struct {
	Seq       int       `json:"seq"`
	Time      time.Time `json:"ts"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	API       string    `json:"api,omitempty"`
	Model     string    `json:"model,omitempty"`
	Stream    bool      `json:"stream"`
	Messages  int       `json:"messages"`
	Tools     int       `json:"tools"`
	ToolNames []string  `json:"tool_names"`
	Kind      string    `json:"kind"`
	// Turn is the 1-based script turn answered; 0 for side and other requests
	// and once the script is exhausted.
	Turn      int    `json:"turn,omitempty"`
	Exhausted bool   `json:"exhausted,omitempty"`
	Repeat    bool   `json:"repeat,omitempty"` // answered again as a retry
	Workdir   string `json:"workdir,omitempty"`
	// Seen are the marks of [WithWatch] that occur in the request's
	// prompt, in the order they were given.
	Seen   []string   `json:"seen,omitempty"`
	Status int        `json:"status"`
	Answer *AnswerLog `json:"answer,omitempty"`
}

// AnswerLog is what the server answered, in the request's own tool names.
type AnswerLog struct {
	Text      string        `json:"text,omitempty"`
	ToolCalls []ToolCallLog `json:"tool_calls,omitempty"`
	Error     *ErrorTurn    `json:"error,omitempty"`
}

// ToolCallLog is one tool call as sent: Input is an object, or the raw text
// of a freeform tool call.
type ToolCallLog struct {
	Name  string `json:"name"`
	Input any    `json:"input"`
}

func (s *Server) newEntry(r *http.Request) RequestLog {
	s.seq++
	p := r.URL.Path
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	return RequestLog{Seq: s.seq, Time: s.opts.now(), Method: r.Method, Path: p, ToolNames: []string{}}
}

// record appends to the log; the caller holds s.mu.
func (s *Server) record(e RequestLog) {
	s.logs = append(s.logs, e)
	if s.opts.log != nil {
		line, _ := json.Marshal(e)
		_, _ = s.opts.log.Write(append(line, '\n')) // a broken log must not break the agent under test
	}
}

func (s *Server) logOther(r *http.Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntry(r)
	e.Kind, e.Status = KindOther, status
	s.record(e)
}

func answerLog(a answer) *AnswerLog {
	l := &AnswerLog{Text: a.text, Error: a.err}
	for _, c := range a.calls {
		l.ToolCalls = append(l.ToolCalls, ToolCallLog{Name: c.name, Input: c.input})
	}
	return l
}
