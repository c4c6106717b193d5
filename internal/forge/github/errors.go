package github

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v75/github"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

// apiError is err, from a request for what, in ralph's terms: a missing
// issue or pull request wraps forge.ErrNotFound, a rate limit still in
// force is a *forge.RateLimitError, a refused token says so with its fix.
func apiError(what string, err error) error {
	if err == nil {
		return nil
	}
	if rl, ok := errors.AsType[*gh.RateLimitError](err); ok {
		return fmt.Errorf("github: %s: %w", what, &forge.RateLimitError{Service: "GitHub", Reset: rl.Rate.Reset.Time, Why: rl.Message})
	}
	if abuse, ok := errors.AsType[*gh.AbuseRateLimitError](err); ok {
		return fmt.Errorf("github: %s: %w", what, &forge.RateLimitError{Service: "GitHub", Reset: time.Now().Add(abuse.GetRetryAfter()), Why: abuse.Message})
	}
	resp, ok := errors.AsType[*gh.ErrorResponse](err)
	if !ok || resp.Response == nil {
		return fmt.Errorf("github: %s: %w", what, err)
	}
	switch resp.Response.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("github: %s: %w (%s)", what, forge.ErrNotFound, resp.Message)
	case http.StatusTooManyRequests:
		return fmt.Errorf("github: %s: %w", what, &forge.RateLimitError{Service: "GitHub", Reset: retryAt(resp.Response.Header), Why: resp.Message})
	case http.StatusUnauthorized:
		return &hint.Error{Err: fmt.Errorf("github: %s: GitHub refused the token: %s", what, resp.Message),
			Fix: "check the token in the variable token_env names: it may have expired or been revoked"}
	case http.StatusForbidden:
		return &hint.Error{Err: fmt.Errorf("github: %s: GitHub refused it: %s", what, resp.Message),
			Fix: "use a token that can read and write the repository's issues and pull requests"}
	}
	return fmt.Errorf("github: %s: %w", what, err)
}

// retryAt is when a 429's Retry-After (seconds) or reset header says to
// try again; zero when it says nothing.
func retryAt(h http.Header) time.Time {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil {
		return time.Now().Add(time.Duration(s) * time.Second)
	}
	if s, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil {
		return time.Unix(s, 0)
	}
	return time.Time{}
}

// notFound reports whether err is GitHub's 404.
func notFound(err error) bool {
	resp, ok := errors.AsType[*gh.ErrorResponse](err)
	return ok && resp.Response != nil && resp.Response.StatusCode == http.StatusNotFound
}
