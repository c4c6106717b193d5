package serve

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A page elsewhere that points a name of its own at 127.0.0.1 must not
// read a loopback server, which answers GETs without the token.
func TestOnLoopbackOnlyLoopbackNamesAreAnswered(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	srv := startServer(t, dir, false)
	for host, want := range map[string]int{
		"":                     http.StatusOK, // the server's own 127.0.0.1:PORT
		"localhost:7777":       http.StatusOK,
		"LOCALHOST":            http.StatusOK,
		"[::1]:7777":           http.StatusOK,
		"127.0.0.2:80":         http.StatusOK,
		"attacker.example":     http.StatusForbidden,
		"attacker.example:80":  http.StatusForbidden,
		"10.0.0.5:7777":        http.StatusForbidden,
		"localhost.example:80": http.StatusForbidden,
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/status", nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, want, resp.StatusCode, "Host %q", host)
	}
}

// Off loopback the token guards every request, whatever name reaches it.
func TestOffLoopbackAnyHostWithTheTokenIsAnswered(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	srv := startServer(t, dir, true)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/status", nil)
	require.NoError(t, err)
	req.Host = "ralph.build.internal:7777"
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
