// Package criteria owns ralph's acceptance criteria: the checks ralph runs
// itself, rather than trusting the agent, to decide that a task is done or
// that an event may pass its gate.
//
// A [Spec] names a type (file_exists, file_contains or contains_text,
// command_succeeds, tests_pass, no_type_errors, lint_clean, git_clean,
// commit_made; see [Types]) and its parameters. [Validate] and [ValidateIn]
// reject a misconfigured one with a message that says how to fix it, and
// [FromName] reads the bare names gates use. [Check] runs one criterion in
// a workspace and returns a [Result] with evidence for the agent's next
// prompt; [CheckAll] runs a list in order. [Detect] shows which command a
// tests_pass or no_type_errors criterion without one will run.
//
// # Limits
//
// Every check has a time limit (Spec.Timeout, else [DefaultTimeout]).
// Commands run with sh -c in the workspace, with stdin from /dev/null,
// ralph's environment plus Env.ExtraEnv, and in their own process group:
// on time-out or cancellation the group gets SIGTERM and, two seconds
// later, SIGKILL, and whatever a command leaves running in its group is
// stopped when it exits. A Result keeps the last 4 KiB of the output.
//
// Paths are resolved inside the workspace, symlinks included; a path that
// leads outside it fails the check.
//
// # Git
//
// [Git] reads the workspace's repository for commit_made and git_clean,
// and for the engine: the commits an iteration made and a fingerprint of
// the work tree for progress detection. [Tree] fingerprints a workspace
// that is not a repository by walking its files, within bounds. Both leave
// ralph's own .ralph/ directory out.
package criteria
