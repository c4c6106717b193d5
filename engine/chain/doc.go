// Package chain runs chains of loops (`ralph chain run`): steps run one
// after another in the same working tree, each a whole loop with its own
// hats, termination and verified completion, within one budget for them
// all.
//
// It owns the plan (the steps, their configs and the budget), the budget
// arithmetic (what is spent, what each step may still spend), the chain's
// state file (.ralph/chains/<run>/chain.json, replaced atomically under
// .ralph/chains/chain.lock) and the handoff from one step to the next: the
// previous step's completion payload and the handoff.md its agent wrote in
// $RALPH_STEP_DIR, read as hostile input (no links, bounded in size).
//
// A step's loop runs behind [Runner], which the command line implements by
// starting `ralph loop` as a child process whose files live in the step's
// directory (runfiles.Dir.ChainStep): the child reuses all of the loop's
// wiring and a crash of one step cannot take the chain's state with it.
// This package starts no process; it reads what a step left in its
// directory (its checkpoint and event log, through runfiles) to account
// for it.
//
// # States of a chain
//
// A chain is running while a step is next or under way (Current names
// it), and then ended: completed when every step completed, or stopped
// (a step that did not complete, a budget spent, an interruption). A
// chain cut off while running (SIGKILL, a crash, Ctrl-C) is resumed at
// Current, the step's loop resumed in place; steps already completed are
// not run again.
package chain
