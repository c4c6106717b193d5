package fakemodel

import (
	"io"
	"time"
)

// Option configures a [Server].
type Option func(*options)

type options struct {
	addr        string
	sideModels  []string
	repeatRetry bool
	log         io.Writer
	now         func() time.Time
	watch       []string
}

// WithAddr sets the listen address (default 127.0.0.1:0, a free port).
func WithAddr(addr string) Option { return func(o *options) { o.addr = addr } }

// WithSideModels replaces [DefaultSideModels]. Patterns are matched against
// the whole model name, case-insensitively; * matches any run of characters.
func WithSideModels(patterns ...string) Option {
	return func(o *options) { o.sideModels = patterns }
}

// RepeatIdenticalRetries makes a main request whose conversation is identical
// to the previous main request's get the previous answer again, so a CLI that
// retries does not skip a turn. Off by default: a fresh agent session with the
// same prompt looks identical too, and must get the next turn. Error turns are
// repeated like any other, so with this option a scripted error persists
// through the CLI's retries; leave it off to script a transient error whose
// retry gets the next turn.
func RepeatIdenticalRetries() Option { return func(o *options) { o.repeatRetry = true } }

// WithLog writes every [RequestLog] to w as one JSON line, as it happens.
func WithLog(w io.Writer) Option { return func(o *options) { o.log = w } }

// WithWatch makes every generation request's [RequestLog].Seen list which
// of marks occur in its prompt (system prompt and messages), so a test can
// check what reached the model — that a prompt arrived whole through the
// transport the CLI was given, or that a part of it was left out — without
// logging prompts that may be hundreds of kilobytes long.
func WithWatch(marks ...string) Option { return func(o *options) { o.watch = marks } }

// WithClock sets the server's clock, which usage limits ([Server.Limit])
// are judged by; time.Now by default.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }
