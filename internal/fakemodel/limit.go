package fakemodel

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// KindLimited is the [RequestLog].Kind of a generation request refused by
// a usage limit ([Server.Limit]): it consumes nothing.
const KindLimited = "limited"

// Limit makes the server refuse every generation request of api
// (APIAnthropic, APIChat, APIResponses, APIGemini) with HTTP 429 and a
// usage limit that resets at reset, until its clock reaches reset. No
// turn is consumed. The answer says what real providers say of a usage
// limit, and tells the client not to retry (x-should-retry: false, which
// Claude Code obeys: a refused request is then one request, not ten with
// back-off): for Anthropic, Claude Code's "Claude AI usage limit
// reached|<Unix seconds>" as its message, and the unified rate-limit
// headers with the reset; for the others, retry-after. A zero reset lifts
// the limit.
func (s *Server) Limit(api string, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits == nil {
		s.limits = map[string]time.Time{}
	}
	if reset.IsZero() {
		delete(s.limits, api)
		return
	}
	s.limits[api] = reset
}

// Advance moves the server's clock d on, as if that much time had passed:
// a limit whose reset it passes lifts.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset += d
}

// Now is the server's clock: WithClock's (time.Now by default), moved on
// by Advance.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Server) nowLocked() time.Time { return s.opts.now().Add(s.offset) }

// limited is the refusal of a request to api under a limit that has not
// reset yet, nil when none holds. Called with s.mu held.
func (s *Server) limited(api string) *ErrorTurn {
	reset, ok := s.limits[api]
	now := s.nowLocked()
	if !ok || !now.Before(reset) {
		return nil
	}
	secs := strconv.FormatInt(int64(reset.Sub(now).Seconds())+1, 10)
	e := &ErrorTurn{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
		Message: fmt.Sprintf("You have hit your usage limit; it resets at %s.", reset.UTC().Format(time.RFC3339)),
		headers: map[string]string{"retry-after": secs, "x-should-retry": "false"}}
	if api == APIAnthropic {
		e.Message = fmt.Sprintf("Claude AI usage limit reached|%d", reset.Unix())
		e.headers["anthropic-ratelimit-unified-status"] = "rejected"
		e.headers["anthropic-ratelimit-unified-reset"] = strconv.FormatInt(reset.Unix(), 10)
	}
	return e
}
