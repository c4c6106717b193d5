package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxLine bounds one message from the client, a line of stdin: a longer
// one is answered with an error and skipped, never held in memory whole.
// A tool's arguments are a few fields.
const MaxLine = 4 << 20

// screen reads the client's lines from in and passes each one that holds a
// JSON-RPC 2.0 message on to pass, for the SDK to serve; a line that does
// not (not JSON, another version, a batch, longer than MaxLine) is
// answered on out with the JSON-RPC error that says why, and the session
// goes on. The SDK's own transport ends the session on the first such
// line. At the end of in, pass is closed with its error (io.EOF: the
// client hung up); screen returns once the SDK closed pass's reader.
func screen(in io.Reader, pass *io.PipeWriter, out io.Writer) {
	rd := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(rd)
		if tooLong {
			reply(out, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("invalid request: the line is longer than %d bytes, the most ralph mcp reads as one message", MaxLine))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if id, code, why := check(msg); why != "" {
				reply(out, id, code, why)
			} else if _, werr := pass.Write(append(msg, '\n')); werr != nil {
				return // the SDK closed the session
			}
		}
		if err != nil {
			_ = pass.CloseWithError(err)
			return
		}
	}
}

// readLine reads a line without its newline; a line longer than MaxLine
// is read to its end and dropped (tooLong). err is the reader's, with the
// line before it (a last line without a newline).
func readLine(rd *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := rd.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong {
			if len(line)+len(chunk) > MaxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// check says what is wrong with a line as a JSON-RPC 2.0 message, as the
// error code and message to answer with ("" when nothing is), and the
// message's id when it has one to answer to.
func check(line []byte) (id json.RawMessage, code int64, why string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is not one JSON value (%v); send one JSON-RPC 2.0 message per line", err)
	}
	if line[0] == '[' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: ralph mcp takes one JSON-RPC message per line, not a batch"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return nil, 0, ""
}

// idOf is the id of a JSON object that has one a response can name (a
// string or a number), or nil.
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// errorResponse is a JSON-RPC error response; its id is null when the
// request's could not be read.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// reply writes an error response on out, in one write, as the SDK writes
// each of its messages.
func reply(out io.Writer, id json.RawMessage, code int64, message string) {
	r := errorResponse{JSONRPC: "2.0", ID: id}
	if r.ID == nil {
		r.ID = json.RawMessage("null")
	}
	r.Error.Code, r.Error.Message = code, message
	data, err := json.Marshal(r)
	if err != nil {
		return // a struct of strings and numbers always marshals
	}
	_, _ = out.Write(append(data, '\n'))
}

// lockedWriter makes each Write whole: the SDK's messages and the
// screen's error responses go to one stdout without interleaving.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
