// Package autopilot owns `ralph autopilot`: it takes ready tasks from a
// tracker (package tasks) in priority order, runs a full `ralph loop` for
// each in its own git worktree, up to a number of slots at once, merges
// finished work onto the base branch through a queue that verifies each
// merged result, closes the task, cleans up, and goes on until nothing is
// ready.
//
// # Files
//
// Everything the autopilot keeps is under the repository's .ralph/, read
// and written through package runfiles (the fold of the log is
// [runfiles.AutopilotState]); this package decides what it says:
//
//	autopilot-events.jsonl   what happened, one event per line, appended
//	                         before it is acted on; the state is its fold
//	autopilot-state.json     the fold, written atomically after each event
//	autopilot.lock           held while an autopilot runs; names its run
//	autopilot-control/       pause, resume, stop and stop-now requests
//	progress.md              counters, active slots, the tasks waiting for
//	                         a person, latest outcomes
//	autopilot/<task>/        each task's objective, config overlay, the
//	                         agent it names (agent.json) and the output of
//	                         its loop
//	tasks/<task>/            a task run by a remote worker: the copy of its
//	                         loop's events (events.jsonl) and its worker
//	                         (worker.json); see [runfiles.RemoteDir]
//
// A task may name its loop's backend and model ([Agent]); the loop gets
// them as `ralph loop --backend` and --model, over cli: but under a hat's
// own backend:. They are the tracker writer's words, checked ([CheckAgent])
// before the task is claimed: one that cannot be used fails that task.
//
// Each task's loop keeps its own .ralph/ inside its worktree, so it is
// resumable on its own, as any loop is. The loop, and the autopilot's own
// git in the worktree, are told where its repository is (git.Pin, from
// having made it) rather than follow its .git file, which the agent can
// rewrite; verify runs confined as the slots are (Options.VerifySandbox). The autopilot follows it there for
// a question its agent asks a person, which it records (task.asked,
// task.answered) with the command that answers it.
//
// One autopilot runs in a repository, and not beside a `ralph loop` whose
// workspace is the repository's checkout: a second start is told which
// runs ([RunningError]), a start beside a loop is refused
// ([LoopRunningError]).
//
// # Loops' worktrees
//
// As the owner of the worktrees directory, the package also places the
// worktrees of the loops a user runs with `ralph loop --worktree`, in
// .loops/NAME on branch ralph-loop/NAME, where no task's can be, and
// makes, names, lists and cleans them ([LoopWorktreeIn],
// [MakeLoopWorktree], [LoopWorktrees], [CleanLoopWorktrees]). Such a loop
// has its own .ralph/ in its worktree, so it runs beside the autopilot.
// `ralph worktree` sees both kinds, the loops' and the tasks' (judged
// against the autopilot's state: [TaskWorktrees]), as one list
// ([Worktrees]), and diffs and cleans them ([DiffWorktree],
// [CleanWorktrees]).
//
// # Crash safety
//
// Every step is an event in the log before its effect, and every effect is
// either idempotent or checked before it is repeated: a restarted
// autopilot folds the log, re-attaches to loops still running, resumes the
// ones that died, and completes or undoes a merge that was in flight. The
// base branch moves only by one fast-forward to a merge that passed its
// verification, so a merge is never applied twice; one that git refuses
// because a file of the user's checkout is in its way stays verified in
// the queue, and the next run lands it.
package autopilot
