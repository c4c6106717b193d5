// Package watch is `ralph watch`: a full-screen terminal program (Bubble
// Tea) that shows what runs in a workspace — a loop, or an autopilot and
// the loops of its slots — as ralph's files say (view.WorkspaceReader),
// with the agent's activity and the events as they come, and the keys to
// pause, resume and stop through the same control files as the commands.
// It reads and never locks, so any number of watchers can come and go
// without the run noticing. Where there is no terminal it prints the same
// as plain lines (Lines).
package watch
