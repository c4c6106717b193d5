// Package runfiles owns what ralph keeps under a workspace's .ralph/: the
// layout (every file's name and path), what the lines of a run's event log
// mean (the topics and payloads of ralph's own lines, and the fold of a log
// into a [RunState]), and every reader and writer of those files: the
// checkpoint ([Checkpoint]), the lock ([AcquireLock], [LockHeld]), the list
// of a workspace's runs ([Runs], [FindRun]), a run's status ([ReadStatus]),
// the end of a log ([RunEnd], [ReadLogProgress]), the question a run waits
// on and its answer ([PendingQuestion], [Answer]), a stop request
// ([RequestStop]), the runs with what they keep on disk and removing old
// ones ([RunsOnDisk], [CleanRuns]), what a killed ralph left
// ([StaleLock], [LeftAgents], [TempLeftovers]). The engine writes a run through it; the views, the
// autopilot and the command line read through it, never taking the lock.
//
// The autopilot's files are here too: the payload of its log's lines and
// their fold into an [AutopilotState] (with the keys of version 1 still
// read), its checkpoint ([LoadAutopilotState], [WriteAutopilotState]),
// progress.md ([RenderProgress]), `ralph autopilot status`
// ([ReadAutopilotStatus]), control requests ([RequestControl]) and what the
// coordinator keeps of a task a remote worker runs ([WorkerInfo],
// [TaskLog]). Package autopilot decides what they say and writes them
// through this package; the views read them here without loading the
// autopilot.
// Every file is made and opened through internal/ralphdir: never through a
// link, private to the user.
//
// # The log is the truth
//
// Everything that changes a run's state is a line in the event log. The
// checkpoint is a fold of the log up to a byte offset ([RunState.Apply] over
// every line), written atomically where the run hands control away (before
// an agent starts, when the loop waits or ends), so it is a cache: with the
// checkpoint gone, folding the whole log rebuilds it, and a resume folds
// every line past the checkpoint it finds. ralph's own bookkeeping
// lines carry what the fold needs:
//
//   - loop.started, loop.resumed: a run (or a resumed segment of it) begins.
//     Runtime is the sum of segments; a segment ends at loop.terminate or,
//     for a ralph that was killed, at the last line it wrote, so the time
//     before --resume is not counted.
//   - iteration.started {iteration, hat, events, confirming}: the offsets of
//     the pending events handed to the hat.
//   - iteration.finished {iteration, hat, outcome, tokens, cost_usd,
//     cost_source, model, …}: the agent's verdict, and what it cost
//     (reported by the agent, computed from tokens at the model's price,
//     or unknown: [CostSource]). A success consumes the hat's events; a failure,
//     rate limit or interruption leaves them pending, so the hat runs again.
//   - event.routed {offset, topic, to} and event.rejected {offset, topic,
//     reason}: the decision on a line the agent wrote (with `ralph emit` or as
//     a tag). A line with no decision yet is undecided; it is decided exactly
//     once, in the next settle step.
//   - agent.rate_limited {iteration, hat, backend, reset_at, wait_ms}: the
//     run waits until the line's time plus wait_ms; a backend that named its
//     reset is out until then (Unavailable).
//   - backend.switched {iteration, hat, chain, from, to, reason, reset_at}:
//     a backend chain (cli.fallback) moved to another backend; from is out
//     until reset_at, or, without one, until the run is resumed
//     (loop.resumed clears those), and the chain runs on to (ChainBackend).
//     Each iteration.finished counts against the backend its
//     iteration.started names (ByBackend).
//   - iteration.settled {iteration}: the consequences of an iteration
//     (default publishes, completion, confirmation) have been published.
//   - loop.terminate {reason, exit_code}: the run ended.
//   - human.asked (the agent's, by `ralph ask`) accepted with event.routed
//     as "question" {timeout_ms}: RunState.Question is pending, and the
//     runtime segment closes (waiting is not runtime). human.answered
//     (source human, by [Answer]) or ralph's human.timed_out with the
//     question's id closes it: the line is routed to the asking hat and the
//     segment reopens at its time. Lines for a question not pending change
//     nothing, so the first answer wins.
//
// Events ralph publishes for hats to act on (task.start, task.resume,
// <hat>.exhausted, <topic>.blocked, …) are routed when they are folded; only
// agent-written events need a decision line, because only their acceptance can
// depend on something outside the log (a gate's criteria).
package runfiles
