package cluster

import (
	"context"
	"log/slog"
)

// LogTo is a logger that hands each record's message to f, for tests that
// wait on a line or check that one was said.
var LogTo = logTo

func logTo(f func(string)) *slog.Logger { return slog.New(funcHandler(f)) }

type funcHandler func(string)

func (funcHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h funcHandler) Handle(_ context.Context, r slog.Record) error {
	h(r.Message)
	return nil
}

func (h funcHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h funcHandler) WithGroup(string) slog.Handler      { return h }
