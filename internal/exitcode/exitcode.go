// Package exitcode is the one table of ralph's exit statuses: how a run
// ended, or why a command could not run at all. Every package that decides
// an exit status uses these, so a script reading $? sees one meaning per
// number.
package exitcode

const (
	// OK: the run completed, or was cancelled by its cancellation topic;
	// a command did what it was asked.
	OK = 0
	// Failure: the run stopped on failure (consecutive failures,
	// thrashing, malformed events, stuck, a stop request).
	Failure = 1
	// Limit: a limit was reached (iterations, runtime, cost, tokens).
	Limit = 2
	// Fatal: the run or command could not go on: bad config or flags, the
	// lock held, a backend missing, a file ralph cannot write.
	Fatal = 3
	// Interrupted: SIGINT or SIGTERM (128 + SIGINT, as shells report it).
	Interrupted = 130
)
