package serve

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browser is a client that keeps cookies as a browser does: by host,
// whatever the port.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar}
}

func get(t *testing.T, client *http.Client, url string) int {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// offLoopback serves a workspace with token as a server bound off
// loopback does: every request needs it.
func offLoopback(t *testing.T, token string) *httptest.Server {
	t.Helper()
	dir, _ := newWorkspace(t, 1)
	srv := httptest.NewServer(NewHandler(dir, token, true, nil))
	t.Cleanup(srv.Close)
	return srv
}

func TestTwoServersOfOneHostKeepTheirOwnCookies(t *testing.T) {
	a, b := offLoopback(t, "token-a"), offLoopback(t, "token-b")
	client := browser(t)
	require.Equal(t, http.StatusOK, get(t, client, a.URL+"/?token=token-a"))
	require.Equal(t, http.StatusOK, get(t, client, b.URL+"/?token=token-b"))
	assert.Equal(t, http.StatusOK, get(t, client, a.URL+"/api/status"), "the page of the first server goes on working")
	assert.Equal(t, http.StatusOK, get(t, client, b.URL+"/api/status"))
}

func TestTheTokenInTheAddressWinsOverAStaleCookie(t *testing.T) {
	srv := offLoopback(t, "new-token")
	client := browser(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	// The cookie of a token since replaced (the token file was removed):
	// the one the server sets, holding another token.
	require.Equal(t, http.StatusOK, get(t, client, srv.URL+"/?token=new-token"))
	cookies := client.Jar.Cookies(u)
	require.Len(t, cookies, 1)
	client.Jar.SetCookies(u, []*http.Cookie{{Name: cookies[0].Name, Value: "old-token", Path: "/"}})
	assert.Equal(t, http.StatusUnauthorized, get(t, client, srv.URL+"/api/status"), "the stale cookie alone")

	assert.Equal(t, http.StatusOK, get(t, client, srv.URL+"/?token=new-token"))
	assert.Equal(t, http.StatusOK, get(t, client, srv.URL+"/api/status"), "the cookie now holds the new token")
	assert.Equal(t, http.StatusOK, get(t, client, srv.URL+"/?token=wrong"), "an old address, with the right cookie")
	assert.Equal(t, http.StatusOK, get(t, client, srv.URL+"/api/status"), "a wrong token in the address does not replace the cookie")
	assert.Equal(t, http.StatusUnauthorized, get(t, browser(t), srv.URL+"/?token=wrong"), "a wrong token, no cookie")
}
