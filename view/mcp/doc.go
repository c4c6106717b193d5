// Package mcp is `ralph mcp`: a Model Context Protocol server over stdio
// whose tools let an agent or an editor read and steer what runs in a
// workspace — status, events, emit, ask, answer, guide, stop, pause, resume.
//
// It is a thin view over view/api, the one model of what programs read of
// a workspace and ask of its run: each tool's text is what the command
// line prints for the same request (`ralph status --json`, `ralph events
// --json`, the sentences of stop, pause, resume and answer), with the same
// value as structured output. A request that fails is a tool error (the
// agent reads it and can fix its call), with the error and how to fix it,
// never a protocol failure.
//
// It owns the transport's edge too: the client's lines are screened before
// the SDK reads them, and one that is not a JSON-RPC 2.0 message (not
// JSON, another version, a batch, longer than MaxLine) is answered with
// the JSON-RPC error that says why; the SDK's own stdio transport ends the
// session on such a line.
package mcp
