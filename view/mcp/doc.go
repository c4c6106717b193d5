// Package mcp is `ralph mcp`: a Model Context Protocol server over stdio
// whose tools let an agent or an editor read and steer what runs in a
// workspace — status, events, emit, ask, answer, stop, pause, resume.
//
// It is a thin view over view/api, the one model of what programs read of
// a workspace and ask of its run: each tool's text is what the command
// line prints for the same request (`ralph status --json`, `ralph events
// --json`, the sentences of stop, pause, resume and answer), with the same
// value as structured output. A request that fails is a tool error (the
// agent reads it and can fix its call), with the error and how to fix it,
// never a protocol failure.
package mcp
