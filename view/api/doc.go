// Package api is what programs read of a workspace and ask of its run from
// outside it, in one shape for every front-end that is not a terminal:
// `ralph serve`'s HTTP API and web page and `ralph mcp`'s tools, and the
// command line's status, events, emit, ask, answer, guide, stop, pause and resume,
// which say the same things the same way.
//
// It reads the workspace's files only (the checkpoint, the event logs, the
// autopilot's state, the agents' activity) and never takes a lock, so it
// can run beside any loop or autopilot and start or stop at any time. It
// steers a run only as the command line does: through the run's control
// files (stop, pause, resume) and its event log (emit, ask, answer, guide).
package api
