// Package hooks runs the user's lifecycle hooks: a shell command (run:) or
// an HTTP POST (post:) for each line of a loop's or the autopilot's event log
// whose topic matches one of the hook's patterns (on:).
//
// It owns four things:
//
//   - Matching ([Match]): topic patterns as hats' triggers use them
//     ([events.Match]), except that ralph's own hook.* lines match only a
//     pattern that names them ("hook.ran", "hook.*"), never "*" or "*.ran".
//   - Running one hook for one event ([Hook.Fire]): a command runs with
//     sh -c in the workspace, in its own process group, with the event as
//     one JSON line on stdin and RALPH_* variables in its environment, and
//     its whole group is killed at its time limit; a post sends the same
//     line as JSON and counts a status outside 2xx as a failure.
//   - Once per event ([Dispatcher]): before hooks run, one write appends a
//     hook.started line for each (hook, event offset); after each one, one
//     write appends its hook.ran line (exit status or HTTP status, duration,
//     the tail of its output, the error). The dispatcher learns what was
//     started and what ran from the same lines the log's owner folds, so a
//     hook already started for an event is never started again, and one
//     whose hook.started has no hook.ran (ralph died while it ran) is
//     recorded as interrupted instead of being run again. This holds across
//     a SIGKILL because the owner of the log hands every line it folds to
//     the dispatcher before it writes a checkpoint past that line: on
//     resume, every line whose hooks may not have been started is folded
//     again, together with the hook.started lines that follow it.
//   - No loops: hook.started never triggers a hook, and a hook.ran triggers
//     only hooks whose pattern names hook.*, and only when the event behind
//     it was not itself a hook.* line, so a hook cannot trigger itself or
//     another hook without end.
//
// It also makes dispatchers from the hooks: section for a loop and for the
// autopilot ([ForLoop], [ForAutopilot]), and says what ralph validate finds
// wrong with that section ([Problems]). The engine and the autopilot
// declare what they need of a dispatcher (engine.Hooks, autopilot.Hooks)
// and never import this package: the command line wires it in.
package hooks
