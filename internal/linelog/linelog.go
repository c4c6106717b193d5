// Package linelog renders log records as the lines people read on
// stderr. Components log with attributes (a task, an attempt, a worker);
// people read the sentence they always read, and see the attributes after
// it only when they ask (ralph --debug). Every string, message and
// attribute alike, goes through a redaction function first, so a secret a
// message quotes never reaches the terminal.
package linelog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options says how a Handler renders its lines.
type Options struct {
	// Prefix is written before each message, after the time.
	Prefix string
	// Level is the least level written; slog.LevelInfo when nil.
	Level slog.Leveler
	// Attrs adds the record's attributes after the message, key=value.
	Attrs bool
	// Redact hides secrets in every string written; none when nil.
	Redact func(string) string
}

// Handler writes one line per record: the time (RFC 3339), the prefix and
// the message, then the attributes when Options.Attrs.
type Handler struct {
	w     io.Writer
	mu    *sync.Mutex
	opts  Options
	attrs []slog.Attr
	group string
}

// New is a Handler writing to w, one whole line per Write, from any
// goroutine.
func New(w io.Writer, opts Options) *Handler {
	if opts.Level == nil {
		opts.Level = slog.LevelInfo
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	return &Handler{w: w, mu: &sync.Mutex{}, opts: opts}
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.opts.Level.Level() }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Time.Format(time.RFC3339) + " " + h.opts.Prefix + h.opts.Redact(r.Message))
	if h.opts.Attrs {
		for _, a := range h.attrs {
			h.writeAttr(&b, "", a)
		}
		r.Attrs(func(a slog.Attr) bool {
			h.writeAttr(&b, h.group, a)
			return true
		})
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *Handler) writeAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			h.writeAttr(b, group+a.Key+".", g)
		}
		return
	}
	v := h.opts.Redact(a.Value.String())
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(" " + group + a.Key + "=" + v)
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range attrs {
		a.Key = h.group + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + name + "."
	return &c
}

// Redacting is h with redact applied to every message and string
// attribute before h sees them. Without attrs it also drops the
// attributes, so a handler that would print them (slog's text handler)
// prints the message alone.
func Redacting(h slog.Handler, redact func(string) string, attrs bool) slog.Handler {
	return &redacting{h: h, redact: redact, attrs: attrs}
}

type redacting struct {
	h      slog.Handler
	redact func(string) string
	attrs  bool
}

func (r *redacting) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redacting) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.redact(rec.Message), rec.PC)
	if r.attrs {
		rec.Attrs(func(a slog.Attr) bool {
			out.AddAttrs(r.redactAttr(a))
			return true
		})
	}
	return r.h.Handle(ctx, out)
}

func (r *redacting) redactAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(r.redact(a.Value.String()))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = r.redactAttr(x)
		}
		a = slog.Group(a.Key, out...)
	case slog.KindAny:
		a.Value = slog.StringValue(r.redact(a.Value.String()))
	}
	return a
}

func (r *redacting) WithAttrs(attrs []slog.Attr) slog.Handler {
	if !r.attrs {
		return r
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = r.redactAttr(a)
	}
	return &redacting{h: r.h.WithAttrs(out), redact: r.redact, attrs: r.attrs}
}

func (r *redacting) WithGroup(name string) slog.Handler {
	if !r.attrs {
		return r
	}
	return &redacting{h: r.h.WithGroup(name), redact: r.redact, attrs: r.attrs}
}
