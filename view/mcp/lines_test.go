package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session is Serve over pipes: the test writes the client's lines and
// reads the server's.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	out   *bufio.Scanner
	ended chan error
}

func newSession(t *testing.T) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), ended: make(chan error, 1)}
	s.out.Buffer(nil, 1<<20)
	go func() {
		s.ended <- Serve(t.Context(), t.TempDir(), "test", inR, outW, nil)
		_ = outW.Close()
	}()
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(s.t, err)
}

// response is one JSON-RPC response as the server wrote it.
type response struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func (s *session) next() response {
	s.t.Helper()
	require.True(s.t, s.out.Scan(), "the server answers: %v", s.out.Err())
	var r response
	require.NoError(s.t, json.Unmarshal(s.out.Bytes(), &r), s.out.Text())
	return r
}

// failed checks that the next response is the error code for the request
// id (null when the request's could not be read), and returns its message.
func (s *session) failed(id string, code int) string {
	s.t.Helper()
	r := s.next()
	require.NotNil(s.t, r.Error, "an error response")
	assert.Equal(s.t, id, string(r.ID))
	assert.Equal(s.t, code, r.Error.Code)
	return r.Error.Message
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

func TestABadLineIsAnsweredAndTheSessionGoesOn(t *testing.T) {
	s := newSession(t)
	s.send(initialize)
	require.Nil(t, s.next().Error)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	s.send("not json")
	assert.Contains(t, s.failed("null", -32700), "not one JSON value")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"} {"jsonrpc":"2.0","id":3,"method":"ping"}`)
	assert.Contains(t, s.failed("null", -32700), "one JSON-RPC 2.0 message per line")
	s.send(`{"jsonrpc":"1.0","id":7,"method":"ping"}`)
	assert.Contains(t, s.failed("7", -32600), `"1.0"`)
	s.send(`{"jsonrpc":"2.0","id":"q","method":"ping"`)
	assert.Contains(t, s.failed("null", -32700), "not one JSON value")
	s.send(`{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}`)
	s.failed("null", -32600)
	s.send(`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	assert.Contains(t, s.failed("null", -32600), "not a batch")
	s.send(`42`)
	s.failed("null", -32600)
	s.send(strings.Repeat("x", MaxLine+1))
	assert.Contains(t, s.failed("null", -32600), fmt.Sprint(MaxLine))
	s.send("")
	s.send("   ")

	// A message of MaxLine bytes is one message.
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	s.send(ping[:len(ping)-1] + strings.Repeat(" ", MaxLine-len(ping)) + "}")
	r := s.next()
	assert.Equal(t, "9", string(r.ID))
	assert.Nil(t, r.Error)
	s.send(`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`)
	r = s.next()
	assert.Equal(t, "10", string(r.ID))
	assert.Contains(t, string(r.Result), `"status"`)

	require.NoError(t, s.in.Close())
	assert.NoError(t, <-s.ended, "the client hung up")
}
