// Package engine owns the loop: an explicit state machine that runs one hat
// per iteration over the event log until a termination condition holds, and
// the run's durable state (the checkpoint in .ralph/state.json and the lock
// in .ralph/loop.lock).
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
// The user's hooks ([Hooks], package hooks) see every line as it is folded,
// an agent's once it is decided, and write hook.started and hook.ran lines
// that the fold passes over. Because the engine hands a line to the hooks
// before it writes a checkpoint past it, a resume folds again every line
// whose hooks may not have started (catchUp), and the hooks keep to once
// per event from the hook.started lines that follow.
//
// Events ralph publishes for hats to act on (task.start, task.resume,
// <hat>.exhausted, <topic>.blocked, …) are routed when they are folded; only
// agent-written events need a decision line, because only their acceptance can
// depend on something outside the log (a gate's criteria).
//
// Each step writes its lines with a single write, so a run killed at any
// instant has either written a step or not. On --resume the log past the
// checkpoint offset is folded, events the agent wrote while ralph was down
// are decided, and an iteration that had started but not finished is recorded
// as interrupted and run again with the same pending events.
//
// # Phases
//
// The loop ([Engine.Run]) moves through these phases ([Phase]), one method each:
//
//	starting       → settling                                  open or resume the run
//	settling       → checking | terminating                    decide undecided events, publish an iteration's consequences
//	checking       → selecting | awaiting_human | terminating  termination conditions, in the order of the exit-code table
//	awaiting_human → checking | terminating                    a question waits for a person: the answer, a stop, a signal or the deadline
//	selecting      → running | settling                        choose the hat, build the prompt, append iteration.started (settling: the hat reached max_activations)
//	running        → collecting                                run the agent
//	waiting        → checking | terminating                    a rate limit: wait for the reset, then repeat the iteration (terminating: a signal)
//	collecting     → settling | waiting | terminating          append tag events and iteration.finished (waiting: a rate limit; terminating: a fatal error)
//	terminating    → done                                      append loop.terminate
//
// Completion is judged in settling, before limits are checked, so a run that
// completes on its last allowed iteration succeeds. Iterations that confirm a
// completion claim are not counted against max_iterations
// ([RunState.CountedIterations]), and a pending confirmation runs even at
// the limit, so that holds with completion_confirmations: 2 as well.
package engine
