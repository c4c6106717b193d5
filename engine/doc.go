// Package engine owns the loop: an explicit state machine that runs one hat
// per iteration over the event log until a termination condition holds. It
// decides what a run's files under .ralph/ say (its log, checkpoint and
// lock) and writes them through package runfiles, which owns their layout
// and what their lines mean (the fold of the log, [runfiles.RunState.Apply]).
//
// # One step, one write
//
// Each step writes its lines with a single write, so a run killed at any
// instant has either written a step or not. On --resume the log past the
// checkpoint offset is folded, events the agent wrote while ralph was down
// are decided, and an iteration that had started but not finished is recorded
// as interrupted and run again with the same pending events.
//
// The user's hooks ([Hooks], package hooks) see every line as it is folded,
// an agent's once it is decided, and write hook.started and hook.ran lines
// that the fold passes over. Because the engine hands a line to the hooks
// before it writes a checkpoint past it, a resume folds again every line
// whose hooks may not have started (catchUp), and the hooks keep to once
// per event from the hook.started lines that follow.
//
// # Phases
//
// The loop ([Engine.Run]) moves through these phases ([runfiles.Phase], which
// the checkpoint records), one method each:
//
//	starting       → settling | wave                                    open or resume the run (wave: a resume finds a wave in flight)
//	settling       → checking | terminating                             decide undecided events, publish an iteration's consequences
//	checking       → selecting | awaiting_human | pacing | terminating  termination conditions, in the order of the exit-code table (pacing: the next iteration would exceed a pacing budget)
//	pacing         → checking | terminating                             append loop.paced, wait until the budget's window allows the next iteration (terminating: a signal; pace.go)
//	awaiting_human → checking | terminating                             a question waits for a person: the answer, a stop, a signal or the deadline
//	selecting      → running | wave | settling                          choose the hat and its backend, build the prompt, append iteration.started (wave: the hat has concurrency and its events hold a wave; settling: the hat reached max_activations)
//	running        → collecting                                         run the agent
//	wave           → settling | terminating                             run a wave's workers at once, append wave.worker_finished as each ends, merge their events into the log (wave.go)
//	waiting        → checking | terminating                             a rate limit: wait for the reset, then repeat the iteration (terminating: a signal)
//	collecting     → settling | waiting | checking | terminating        append tag events and iteration.finished (waiting: a rate limit; checking: backend.switched; terminating: a fatal error)
//	terminating    → done                                               append loop.terminate
//
// Completion is judged in settling, before limits are checked, so a run that
// completes on its last allowed iteration succeeds. Iterations that confirm a
// completion claim are not counted against max_iterations
// ([runfiles.RunState.CountedIterations]), and a pending confirmation runs even at
// the limit, so that holds with completion_confirmations: 2 as well.
//
// # Backend chains
//
// A hat's backend may head a chain (cli.fallback, [Options.Fallback]).
// When an iteration's agent hits a rate limit whose reset is further away
// than the chain's [Fallback.After], or fails for the provider's sake
// (credentials, an overloaded service, a CLI that cannot run:
// [events.AgentResult.ProviderFault], or Run's error), collecting appends
// backend.switched instead of agent.rate_limited and goes to checking, and
// selecting runs the same iteration, with the same prompt, on the first
// backend of the chain that is available (fallback.go). The fold keeps
// which backend each chain is on and until when each backend is out
// ([runfiles.RunState.Unavailable]): until its reset, or, for credentials
// and a missing CLI, until the run is resumed (only a person fixes those,
// and a resume is how they say so; retrying on every iteration would cost
// an agent start each time). Selecting appends backend.switched too when
// the chain moves back to an earlier backend whose reset passed. With no
// backend of the chain available, the iteration waits for the earliest
// reset of the chain (agent.rate_limited, waiting), after a rate limit and
// a provider's failure alike; an auth failure ends the run only when no
// backend of the chain will come back. A wave's worker moves the same way,
// on its own, and never waits (moveWorker in wave.go).
//
// # Confined runs and ralph's git
//
// The criteria and gates checked on a hat's work run in that hat's agent's
// sandbox ([Options.CheckSandbox]), since they run what it wrote. ralph's
// own git is not confined, so around every confined agent and confined
// check the engine compares what decides what git runs in the workspace
// (gitguard.go); a change ends the run as fatal ([GitArmedError]) before
// ralph runs git there again. In a worktree ralph made, its git is pinned
// to the repository's directories ([Options.GitPin]).
package engine
