package cluster

import (
	"context"
	"fmt"
	"log/slog"
)

// The keys of the attributes the coordinator's and the workers' log
// records carry, beside the sentence people read (which names the same
// things in words): a handler that shows attributes (ralph --debug) lets
// a log be filtered by task, attempt or worker.
const (
	attrTask     = "task"
	attrAttempt  = "attempt"
	attrRun      = "run"
	attrWorker   = "worker"
	attrSubject  = "subject"
	attrDelivery = "delivery"
)

// taskAttrs are the attributes of a record about task's attempt.
func taskAttrs(task Task) []any {
	return []any{attrTask, task.ID, attrRun, task.Run, attrAttempt, task.Attempt}
}

// logAt logs the sentence format makes, at level, with attrs.
func logAt(log *slog.Logger, level slog.Level, attrs []any, format string, v ...any) {
	log.Log(context.Background(), level, fmt.Sprintf(format, v...), attrs...)
}

// orDiscard is log, or a logger that writes nothing when nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
