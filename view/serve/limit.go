package serve

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/ralph-loop/ralph/internal/hint"
)

// DefaultMaxStreams bounds the streams open at once unless told otherwise.
// Each holds a connection, a goroutine and its reads of the workspace; a
// person's page holds two.
const DefaultMaxStreams = 64

// retryAfter is what a refused stream is told to wait, in seconds.
const retryAfter = 5

// streamLimit counts the open streams, in all and per client address, so
// that no client, with or without the token, can hold more than its share.
type streamLimit struct {
	total, perClient int

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

// newStreamLimit allows max streams at once (DefaultMaxStreams when < 1),
// a quarter of them (at least one) from one client address.
func newStreamLimit(max int) *streamLimit {
	if max < 1 {
		max = DefaultMaxStreams
	}
	return &streamLimit{total: max, perClient: (max + 3) / 4, byClient: map[string]int{}}
}

// take claims a stream for client; release gives it back. Full, it says
// why.
func (l *streamLimit) take(client string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open >= l.total:
		return nil, fmt.Errorf("%d streams are open, as many as ralph serve allows", l.open)
	case l.byClient[client] >= l.perClient:
		return nil, fmt.Errorf("%s has %d streams open, as many as one client may", client, l.byClient[client])
	}
	l.open++
	l.byClient[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.byClient[client]--; l.byClient[client] == 0 {
				delete(l.byClient, client)
			}
		})
	}, nil
}

// clientOf is the address a request came from, without its port: one
// client, however many connections it opens.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// asStream serves a stream when the limit has room for it, and otherwise
// answers 503 with a Retry-After, on a connection that is then closed.
func (h *Handler) asStream(serve func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		release, err := h.streams.take(clientOf(r))
		if err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusServiceUnavailable, &hint.Error{Err: err,
				Fix: "close a page or stream of this server, or try again in a few seconds; `ralph serve --max-streams N` allows more"})
			return nil
		}
		defer release()
		return serve(w, r)
	}
}
