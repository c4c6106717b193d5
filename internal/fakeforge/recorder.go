package fakeforge

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Request is one request a fake was sent.
type Request struct {
	Method string
	Path   string // with its query, as sent
	Body   string
}

// Write reports whether the request would change something on the real
// service. A GraphQL request is a write when it is a mutation.
func (r Request) Write() bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	if strings.HasSuffix(strings.SplitN(r.Path, "?", 2)[0], "/graphql") {
		var q struct{ Query string }
		_ = json.Unmarshal([]byte(r.Body), &q)
		return strings.HasPrefix(strings.TrimSpace(q.Query), "mutation")
	}
	return true
}

// Refusal is a rate limit's answer a fake gives instead of serving.
type Refusal struct {
	Status  int
	Headers map[string]string
	Body    string
}

// Recorder is what every fake shares: the log of its requests, the check
// of the token, and the rate limit's refusals to give next.
type Recorder struct {
	// Token is the one token the fake accepts; "" accepts any.
	Token string
	// Scheme is how the token is sent: "Bearer" (GitHub, GitLab OAuth),
	// "" for a bare Authorization header (Linear's API keys), or a
	// header's name such as "PRIVATE-TOKEN" when it contains a '-'.
	Scheme string

	mu       sync.Mutex
	requests []Request
	refusals []Refusal
}

// Requests are the requests sent so far.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// Writes are the requests sent so far that would change something.
func (r *Recorder) Writes() []Request {
	var out []Request
	for _, req := range r.Requests() {
		if req.Write() {
			out = append(out, req)
		}
	}
	return out
}

// RefuseNext makes the next len(refusals) requests get those answers.
func (r *Recorder) RefuseNext(refusals ...Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusals = append(r.refusals, refusals...)
}

// Wrap is next behind the token check, the log and the refusals.
func (r *Recorder) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		r.mu.Lock()
		r.requests = append(r.requests, Request{Method: req.Method, Path: req.URL.RequestURI(), Body: string(body)})
		var refusal *Refusal
		if len(r.refusals) > 0 {
			refusal = &r.refusals[0]
			r.refusals = r.refusals[1:]
		}
		r.mu.Unlock()
		if !r.authorized(req) {
			Error(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if refusal != nil {
			for k, v := range refusal.Headers {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refusal.Status)
			_, _ = io.WriteString(w, refusal.Body)
			return
		}
		next.ServeHTTP(w, req)
	})
}

func (r *Recorder) authorized(req *http.Request) bool {
	if r.Token == "" {
		return true
	}
	switch {
	case strings.Contains(r.Scheme, "-"):
		return req.Header.Get(r.Scheme) == r.Token
	case r.Scheme == "":
		return req.Header.Get("Authorization") == r.Token
	default:
		return req.Header.Get("Authorization") == r.Scheme+" "+r.Token
	}
}

// JSON writes v as the answer, with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error writes an error answer shaped as GitHub's and GitLab's are:
// {"message": …}.
func Error(w http.ResponseWriter, status int, message string) {
	JSON(w, status, map[string]any{"message": message, "status": strconv.Itoa(status)})
}
