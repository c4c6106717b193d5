package main

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The page's cookie holds the token of one serve: two serves on one host,
// whose cookies a browser keeps by host and not by port, each keep their
// own, and the token in a fresh address wins over a cookie gone stale.
func TestServeCookiesOfTwoServesOnOneHost(t *testing.T) {
	t.Parallel()
	a, b := newWorkspace(t), newWorkspace(t)
	for _, w := range []*workspace{a, b} {
		// As a run leaves it: the token is kept in .ralph/serve.token.
		require.NoError(t, os.Mkdir(filepath.Join(w.dir, ".ralph"), 0o700))
	}
	sa, sb := startServeOn(t, a.dir, "0.0.0.0:0"), startServeOn(t, b.dir, "0.0.0.0:0")
	require.NotEqual(t, sa.token, sb.token)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	get := func(url string) int {
		resp, err := browser.Get(url)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get(sa.url+"/?token="+sa.token))
	require.Equal(t, http.StatusOK, get(sb.url+"/?token="+sb.token))
	assert.Equal(t, http.StatusOK, get(sa.url+"/api/status"), "the first serve's page goes on working")
	assert.Equal(t, http.StatusOK, get(sb.url+"/api/status"))

	// The token is made anew (its file removed): the browser's cookie is
	// stale, and the new address lets it in again.
	sa.stop()
	require.NoError(t, os.Remove(filepath.Join(a.dir, ".ralph", "serve.token")))
	port := sa.url[strings.LastIndex(sa.url, ":")+1:]
	again := startServeOn(t, a.dir, "0.0.0.0:"+port)
	require.NotEqual(t, sa.token, again.token)
	assert.Equal(t, http.StatusUnauthorized, get(again.url+"/api/status"), "the stale cookie")
	assert.Equal(t, http.StatusOK, get(again.url+"/?token="+again.token))
	assert.Equal(t, http.StatusOK, get(again.url+"/api/status"), "the cookie now holds the new token")
}

// On every interface ralph serve names the addresses the page opens at:
// the loopback's and each interface's, never the wildcard.
func TestServeOnEveryInterfacePrintsAddressesThatOpen(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	s := startServeOn(t, w.dir, "0.0.0.0:0")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	require.NoError(t, err)
	want := []string{"http://127.0.0.1:" + port}
	ifaces, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range ifaces {
		if ip := a.(*net.IPNet).IP; ip.To4() != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			want = append(want, "http://"+net.JoinHostPort(ip.String(), port))
		}
	}
	var got []string
	waitFor(t, "every address", func() bool {
		got = got[:0]
		for line := range strings.Lines(s.out.String()) {
			if m := pageAddress.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				got = append(got, m[1])
			}
		}
		return len(got) >= len(want)
	})
	assert.Subset(t, got, want)
	assert.NotContains(t, s.out.String(), "[::]")
	assert.NotContains(t, s.out.String(), "0.0.0.0")
	for _, u := range got {
		resp, err := http.Get(u + "/?token=" + s.token)
		require.NoError(t, err, u)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, u)
		assert.Contains(t, string(body), "<html", u)
	}
}
