package forge

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitedServer refuses the first refusals requests with headers, then
// answers 200 with the body it was sent.
func limitedServer(t *testing.T, refusals int, status int, headers map[string]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(seen.Add(1)) <= refusals {
			for k, v := range headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"message":"API rate limit exceeded"}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

type waits struct {
	slept []time.Duration
	told  []string
}

func (w *waits) transport(now time.Time) *RateLimited {
	return &RateLimited{
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { w.slept = append(w.slept, d); return nil },
		Wait:  func(d time.Duration, why string) { w.told = append(w.told, d.String()+": "+why) },
	}
}

func post(t *testing.T, rt http.RoundTripper, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestA429WaitsForRetryAfterAndSendsTheBodyAgain(t *testing.T) {
	srv, seen := limitedServer(t, 1, http.StatusTooManyRequests, map[string]string{"Retry-After": "7"})
	var w waits
	resp := post(t, w.transport(time.Now()), srv.URL+"/graphql", `{"query":"{ viewer { id } }"}`)
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"query":"{ viewer { id } }"}`, string(body), "the retried request carries its body")
	assert.Equal(t, []time.Duration{7 * time.Second}, w.slept)
	assert.Equal(t, []string{"7s: POST /graphql answered 429, retry after 7"}, w.told)
	assert.EqualValues(t, 2, seen.Load())
}

func TestAGitHub403WithTheLimitSpentWaitsForTheReset(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	srv, _ := limitedServer(t, 1, http.StatusForbidden, map[string]string{
		"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(now.Add(90*time.Second).Unix(), 10)})
	var w waits
	resp := post(t, w.transport(now), srv.URL+"/repos/o/r/issues", `{}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []time.Duration{91 * time.Second}, w.slept, "the wait runs a second past the reset")
	require.Len(t, w.told, 1)
	assert.Contains(t, w.told[0], "limit resets at 2027-01-15T08:01:30Z")
}

func TestLinearsMillisecondResetIsRead(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	srv, _ := limitedServer(t, 1, http.StatusTooManyRequests, map[string]string{
		"X-RateLimit-Requests-Remaining": "0", "X-RateLimit-Requests-Reset": strconv.FormatInt(now.Add(30*time.Second).UnixMilli(), 10)})
	var w waits
	resp := post(t, w.transport(now), srv.URL+"/graphql", `{}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []time.Duration{31 * time.Second}, w.slept)
}

func TestAnOrdinary403IsNotARateLimit(t *testing.T) {
	srv, seen := limitedServer(t, 1, http.StatusForbidden, map[string]string{"X-RateLimit-Remaining": "4999"})
	var w waits
	resp := post(t, w.transport(time.Now()), srv.URL+"/repos/o/r/issues/1/assignees", `{}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a permission refusal goes to the client as it is")
	assert.Empty(t, w.slept)
	assert.EqualValues(t, 1, seen.Load())
}

func TestAWaitLongerThanMaxWaitIsLeftToTheClient(t *testing.T) {
	srv, seen := limitedServer(t, 1, http.StatusTooManyRequests, map[string]string{"Retry-After": "3600"})
	var w waits
	rt := w.transport(time.Now())
	rt.MaxWait = time.Minute
	resp := post(t, rt, srv.URL+"/x", `{}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Empty(t, w.slept)
	assert.EqualValues(t, 1, seen.Load())
}

func TestTriesAreBounded(t *testing.T) {
	srv, seen := limitedServer(t, 100, http.StatusTooManyRequests, map[string]string{"Retry-After": "1"})
	var w waits
	rt := w.transport(time.Now())
	rt.MaxTries = 3
	resp := post(t, rt, srv.URL+"/x", `{}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Len(t, w.slept, 2)
	assert.EqualValues(t, 3, seen.Load())
}

func TestAnInterruptEndsTheWait(t *testing.T) {
	srv, _ := limitedServer(t, 1, http.StatusTooManyRequests, map[string]string{"Retry-After": "600"})
	ctx, cancel := context.WithCancel(context.Background())
	rt := &RateLimited{Wait: func(time.Duration, string) { cancel() }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	_, err = (&http.Client{Transport: rt}).Do(req)
	require.ErrorIs(t, err, context.Canceled)
}

func TestTokenNamesTheVariableNeverAValue(t *testing.T) {
	t.Setenv("RALPH_TEST_FORGE_TOKEN", "")
	_, err := Token("github", "RALPH_TEST_FORGE_TOKEN")
	require.ErrorContains(t, err, "$RALPH_TEST_FORGE_TOKEN is not set")
	_, err = Token("gitlab", "")
	require.ErrorContains(t, err, "no token_env")
	t.Setenv("RALPH_TEST_FORGE_TOKEN", " ghp_secret\n")
	tok, err := Token("github", "RALPH_TEST_FORGE_TOKEN")
	require.NoError(t, err)
	assert.Equal(t, "ghp_secret", tok)
}

// graphQLServer answers the first refusals requests with status, headers
// and body, then 200 with the body it was sent.
func graphQLServer(t *testing.T, refusals, status int, headers map[string]string, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(seen.Add(1)) <= refusals {
			for k, v := range headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		sent, _ := io.ReadAll(r.Body)
		_, _ = w.Write(sent)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// Linear refuses a request over its limit with a 400 whose GraphQL error
// says RATELIMITED, and the reset of the spent limit in epoch
// milliseconds.
func TestLinearsRateLimitedErrorWaitsForTheSpentLimitsReset(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	srv, seen := graphQLServer(t, 1, http.StatusBadRequest, map[string]string{
		"X-RateLimit-Requests-Remaining": "4000", "X-RateLimit-Requests-Reset": strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10),
		"X-RateLimit-Complexity-Remaining": "0", "X-RateLimit-Complexity-Reset": strconv.FormatInt(now.Add(20*time.Second).UnixMilli(), 10)},
		`{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED","statusCode":429}}]}`)
	var w waits
	resp := post(t, w.transport(now), srv.URL+"/graphql", `{"query":"query Viewer { viewer { id } }"}`)
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"query":"query Viewer { viewer { id } }"}`, string(body))
	assert.Equal(t, []time.Duration{21 * time.Second}, w.slept, "the complexity limit is the spent one")
	require.Len(t, w.told, 1)
	assert.Contains(t, w.told[0], "POST /graphql answered 400 RATELIMITED, limit resets at 2027-01-15T08:00:20Z")
	assert.EqualValues(t, 2, seen.Load())
}

// Any other GraphQL error with a 400 is the client's to read, whole.
func TestA400WithAnotherGraphQLErrorReachesTheClientWhole(t *testing.T) {
	errBody := `{"errors":[{"message":"Entity not found: Issue","extensions":{"code":"INPUT_ERROR","statusCode":400}}],"data":null}`
	srv, seen := graphQLServer(t, 1, http.StatusBadRequest, nil, errBody)
	var w waits
	resp := post(t, w.transport(time.Now()), srv.URL+"/graphql", `{}`)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, errBody, string(body))
	assert.Empty(t, w.slept)
	assert.EqualValues(t, 1, seen.Load())
}

// Of two resets, neither limit said spent, the later is waited for.
func TestLinearsLaterResetIsWaitedForWhenNeitherLimitIsSaidSpent(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	srv, _ := graphQLServer(t, 1, http.StatusBadRequest, map[string]string{
		"X-RateLimit-Requests-Reset":   strconv.FormatInt(now.Add(5*time.Second).UnixMilli(), 10),
		"X-RateLimit-Complexity-Reset": strconv.FormatInt(now.Add(9*time.Second).UnixMilli(), 10)},
		`{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`)
	var w waits
	resp := post(t, w.transport(now), srv.URL+"/graphql", `{}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []time.Duration{10 * time.Second}, w.slept)
}
