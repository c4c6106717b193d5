package mcp

import (
	"context"
	"errors"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view"
)

// instructions tell the client what the server is for, once, at connect.
const instructions = `ralph runs a coding agent in a loop until a task is verifiably done, or an autopilot that works through a task tracker with a loop per task.
These tools read and steer what runs in one workspace. An agent that ralph launched publishes its hand-offs with emit (they land in its own run, tagged with its hat and iteration) and asks a person with ask.
Anyone may read status and events, and stop, pause or resume the run.`

// NewServer is the MCP server of the workspace dir, with ralph's tools.
// version is ralph's, which the server gives as its own. r's secret values
// are hidden in what the tools read and write.
func NewServer(dir, version string, r *redact.Redactor) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "ralph", Title: "ralph", Version: version},
		&sdk.ServerOptions{Instructions: instructions})
	t := tools{dir: dir, redactor: r}
	t.add(s)
	return s
}

// Serve runs the server of dir over in and out (the process's stdin and
// stdout) until the client hangs up or ctx ends, hiding r's secret values.
// A line of in that is not a JSON-RPC 2.0 message is answered with a
// JSON-RPC error, and the session goes on.
func Serve(ctx context.Context, dir, version string, in io.Reader, out io.Writer, r *redact.Redactor) error {
	w := &lockedWriter{w: out}
	lines, pass := io.Pipe()
	go screen(in, pass, w)
	transport := &sdk.IOTransport{Reader: lines, Writer: nopWriteCloser{w}}
	err := NewServer(dir, version, r).Run(ctx, transport)
	if ctx.Err() != nil || isHangUp(err) {
		return nil // Ctrl-C, or the client went: the server's job is done
	}
	return err
}

// isHangUp says err is the client closing the connection.
func isHangUp(err error) bool {
	return err == nil || errors.Is(err, io.EOF)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// toolError is a failed request as the agent reads it: the error and how
// to fix it, in the command line's words.
type toolError struct{ err error }

func (e toolError) Error() string {
	var b strings.Builder
	hint.Write(&b, e.err, view.HintOf(e.err))
	return strings.TrimRight(b.String(), "\n")
}

func (e toolError) Unwrap() error { return e.err }

// failed is a tool's result for err: a tool error, which the SDK sends
// as a result with isError set.
func failed[Out any](err error) (*sdk.CallToolResult, Out, error) {
	var zero Out
	return nil, zero, toolError{err}
}

// text is a result whose content is text, with out as its structured
// output.
func text[Out any](s string, out Out) (*sdk.CallToolResult, Out, error) {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}, out, nil
}
