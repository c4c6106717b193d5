package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimited is an http.RoundTripper that waits out a service's rate
// limit and sends the request again, instead of failing the autopilot's
// step: a 429, a 403 whose headers say the limit is spent (GitHub's
// primary and secondary limits), or a 400 whose GraphQL errors say
// RATELIMITED (Linear's) waits for Retry-After or the limit's reset time,
// tells Wait, and retries. A wait longer than MaxWait, or a
// request refused more than MaxTries times, is an error naming when the
// limit resets.
type RateLimited struct {
	// Next sends the requests; http.DefaultTransport when nil.
	Next http.RoundTripper
	// Wait is told before each wait.
	Wait Waiter
	// MaxWait is the longest single wait; default 15 minutes.
	MaxWait time.Duration
	// MaxTries is how often one request is sent at most; default 5.
	MaxTries int
	// Now and Sleep are the clock; time.Now and a context-aware sleep
	// when nil.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// RateLimitError is a request the service still refused for its rate
// limit when ralph stopped waiting.
type RateLimitError struct {
	Service string
	Reset   time.Time // zero when the service did not say
	Why     string
}

func (e *RateLimitError) Error() string {
	if e.Reset.IsZero() {
		return fmt.Sprintf("%s's rate limit: %s", e.Service, e.Why)
	}
	return fmt.Sprintf("%s's rate limit: %s; it resets at %s", e.Service, e.Why, e.Reset.Format(time.RFC3339))
}

// Hint says what to do about it.
func (e *RateLimitError) Hint() string {
	return "run again after the reset, or use a token with a higher limit"
}

func (t *RateLimited) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	tries := t.MaxTries
	if tries <= 0 {
		tries = 5
	}
	for try := 1; ; try++ {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		wait, why, limited := t.limit(resp)
		if !limited {
			return resp, nil
		}
		if try >= tries || wait > t.maxWait() || req.Body != nil && req.GetBody == nil {
			// Leave the refusal to the client, which reads it as the
			// service's error; the wait is too long to take here.
			return resp, nil
		}
		drain(resp)
		if t.Wait != nil {
			t.Wait(wait, why)
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		if req, err = rewind(req); err != nil {
			return nil, err
		}
	}
}

func (t *RateLimited) maxWait() time.Duration {
	if t.MaxWait > 0 {
		return t.MaxWait
	}
	return 15 * time.Minute
}

func (t *RateLimited) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *RateLimited) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// limit reads whether resp is a rate limit's refusal, how long to wait
// and the service's reason.
func (t *RateLimited) limit(resp *http.Response) (time.Duration, string, bool) {
	h := resp.Header
	spent := h.Get("X-RateLimit-Remaining") == "0" || h.Get("RateLimit-Remaining") == "0" ||
		h.Get("X-RateLimit-Requests-Remaining") == "0" || h.Get("X-RateLimit-Complexity-Remaining") == "0"
	why := fmt.Sprintf("%s %s answered %d", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusForbidden && (spent || h.Get("Retry-After") != ""):
	case resp.StatusCode == http.StatusBadRequest && graphQLRateLimited(resp):
		why += " " + rateLimitedCode
	default:
		return 0, "", false
	}
	if wait, ok := retryAfter(h.Get("Retry-After"), t.now()); ok {
		return wait, why + ", retry after " + h.Get("Retry-After"), true
	}
	if reset, ok := ResetAt(h); ok {
		return max(reset.Sub(t.now()), 0) + time.Second, why + ", limit resets at " + reset.UTC().Format(time.RFC3339), true
	}
	// A refusal that says nothing of when: a short, growing pause is what
	// the services ask of clients.
	return time.Minute, why + " without a reset time", true
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// ResetAt reads a limit's reset time: GitHub's and GitLab's epoch
// seconds, Linear's epoch milliseconds. Linear has two limits, requests
// and complexity, each with its reset: the spent one's is when to try
// again, else the later.
func ResetAt(h http.Header) (time.Time, bool) {
	for _, name := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if s, err := strconv.ParseInt(strings.TrimSpace(h.Get(name)), 10, 64); err == nil && s > 0 {
			return time.Unix(s, 0), true
		}
	}
	var later time.Time
	for _, limit := range []string{"Requests", "Complexity"} {
		ms, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-"+limit+"-Reset")), 10, 64)
		if err != nil || ms <= 0 {
			continue
		}
		at := time.UnixMilli(ms)
		if h.Get("X-RateLimit-"+limit+"-Remaining") == "0" {
			return at, true
		}
		if at.After(later) {
			later = at
		}
	}
	return later, !later.IsZero()
}

// rateLimitedCode is the extensions.code of the GraphQL error Linear
// answers a request over its rate limit with, with the status 400.
const rateLimitedCode = "RATELIMITED"

// graphQLRateLimited reports whether resp's body is GraphQL errors one of
// which is RATELIMITED. The body is left to be read again from its start.
func graphQLRateLimited(resp *http.Response) bool {
	peek, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(peek), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	var body struct {
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal(peek, &body) != nil {
		return false
	}
	for _, e := range body.Errors {
		if e.Extensions.Code == rateLimitedCode {
			return true
		}
	}
	return false
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// rewind is req ready to be sent again, its body read anew.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return again, nil
}
