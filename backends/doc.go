// Package backends runs one coding-agent process per iteration and turns
// what it prints into normalized activity.
//
// It owns the registry of agent CLIs (one file per CLI — claude.go, codex.go,
// … — plus the generic command backend in command.go), the process runner
// (working directory, environment, stdin, process group, time limits, the
// group kill) and the stream parsers that turn each CLI's stdout into
// [events.Activity] and an [events.AgentResult]. It imports only events: the
// engine declares the interface it needs, and [*Backend] satisfies it.
//
// # Running an agent
//
// [New] picks a CLI by name ([Names] lists them; "custom" is an alias of
// "command"; "auto" takes the first installed of claude, codex, gemini,
// opencode, pi, qwen, copilot). [Backend.Run] starts the CLI in
// [events.AgentRun.Dir] with ralph's environment plus the CLI's own
// unattended-mode variables, [Options.Env] and [events.AgentRun.Env] (later
// wins). The prompt goes on stdin or as an argument, depending on the CLI
// and [Options.PromptMode]; when it is an argument, stdin is /dev/null. A
// prompt too long for one argument (Linux refuses one over 128 KiB) never is
// one: it goes on stdin, or, for a command given it as an argument, is cut
// to its beginning and end, and an [events.ActivityWarning] says so (see
// prompt.go).
// [events.AgentRun.Started] is told the agent's pid (its process group id)
// once it runs. Activity is reported from a single goroutine while the
// agent runs, and every report happens before Run returns.
//
// # Errors: retry or give up
//
//   - [*MissingBinaryError], [*UnknownBackendError] and option errors from
//     New are configuration mistakes: give up (exit 3).
//   - Run returns ctx.Err() when the caller's context ended before the agent
//     exited by itself: the run was interrupted. The partial result comes
//     with it (what was parsed so far, ExitCode, Duration); its Failure is
//     not settled. ForceKill closing without ctx ending is an interruption
//     too, with an error that says so.
//   - Otherwise Run returns a nil error and the verdict is in the result:
//     FailureRateLimit means wait until RateLimitResetAt (zero: unknown) and
//     repeat the iteration; FailureAuth means give up, a human must log in;
//     every other Failure kind is a failed iteration.
//   - Any other error means the agent could not be run at all (the workspace
//     is missing, the binary is not executable).
//
// # Process groups
//
// Each agent runs in its own process group. On interruption, on the
// iteration time limit and on the inactivity limit (no stdout or stderr
// bytes for [events.AgentRun.IdleTimeout]) the group gets SIGTERM, then
// SIGKILL once [Options.KillGrace] has passed with anything still alive, or
// at once when [events.AgentRun.ForceKill] closes (a second Ctrl-C).
// The same happens to whatever the agent left running in its group after it
// exited, so when Run returns no process of the group is left. On Linux ralph
// makes itself a child subreaper on the first Run, so that the agent's
// orphaned children are reparented to ralph and reaped, rather than left to
// an init that may never reap them (as in many containers). A process that
// leaves the group (setsid) is out of reach; ralph stops reading its output
// one second after the group is gone. The group handling itself lives in
// internal/procgroup, which criteria uses too.
//
// # Adding a CLI
//
// A CLI is a cliSpec registered from its file's init: how to build the
// arguments and environment, when it gets its prompt on stdin (promptStdin:
// stdinAlways once the CLI has been seen to take a piped prompt), a parser (a parseFunc) that reads stdout from
// an io.Reader, and a verdict that settles the failure kind from the exit
// code and the stderr tail. Any CLI's file is the template: a JSON-lines
// parser decodes its lines with forEachJSONObject, switches on the line
// type (listing the types it has cases for with newLineTypes, since lines
// of other types are not decoded), counts tools with toolUse and toolIDs
// and reports failures through cliFailure (all in jsonl.go); a plain-text
// CLI uses textParser. A JSON-lines CLI's types and line struct go in
// parserLineTypes and lineDecoders (jsonl_test.go), which check that
// skipping lines by type changes nothing and that decodeJSONLine reads its
// lines as encoding/json would; a type that no recording has needs a line
// in unrecordedLines. Once registered, its parser is fuzzed (fuzz_test.go)
// and benchmarked (BenchmarkParsers); give it a BenchmarkParse<CLI> on a
// large stream too (bench_test.go). Record its real output under
// testdata/<name>/ and it joins the conformance suite (see
// conformance_test.go).
package backends
