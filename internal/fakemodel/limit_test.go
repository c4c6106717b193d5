package fakemodel_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

func TestLimitRefusesOneAPIUntilItsClockPassesTheReset(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	srv, url := serve(t, apiScript(), fakemodel.WithClock(func() time.Time { return start }))
	reset := start.Add(time.Hour)
	srv.Limit(fakemodel.APIAnthropic, reset)

	resp := post(t, url+"/v1/messages", body(anthropicBody, "false"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "false", resp.Header.Get("x-should-retry"), "Claude Code does not retry then")
	assert.Equal(t, "3601", resp.Header.Get("retry-after"))
	assert.Equal(t, "rejected", resp.Header.Get("anthropic-ratelimit-unified-status"))
	assert.Equal(t, strconv.FormatInt(reset.Unix(), 10), resp.Header.Get("anthropic-ratelimit-unified-reset"))
	assert.Equal(t, map[string]any{"type": "rate_limit_error", "message": "Claude AI usage limit reached|" + strconv.FormatInt(reset.Unix(), 10)},
		decodeJSON(t, resp)["error"])
	assert.Zero(t, srv.TurnsUsed(), "a refused request consumes no turn")

	// Another API is not limited: it gets the first turn.
	chat := decodeJSON(t, post(t, url+"/v1/chat/completions", body(chatBody, "false")))
	assert.NotEmpty(t, chat["choices"])
	assert.Equal(t, 1, srv.TurnsUsed())

	srv.Advance(time.Hour)
	assert.Equal(t, reset, srv.Now())
	second := decodeJSON(t, post(t, url+"/v1/messages", body(anthropicBody, "false")))
	assert.Equal(t, "end_turn", second["stop_reason"], "the reset passed: the next turn")

	logs := srv.Requests()
	require.Len(t, logs, 3)
	assert.Equal(t, []string{fakemodel.KindLimited, fakemodel.KindMain, fakemodel.KindMain}, []string{logs[0].Kind, logs[1].Kind, logs[2].Kind})
	assert.Equal(t, http.StatusTooManyRequests, logs[0].Status)
}
