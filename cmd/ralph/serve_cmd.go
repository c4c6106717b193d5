package main

import (
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/view/serve"
)

type serveCmd struct {
	Addr        string                     `default:"127.0.0.1:7777" placeholder:"HOST:PORT" help:"Listen here (port 0: any free port). Off loopback, every request needs the token."`
	IdleTimeout flagvalue.PositiveDuration `default:"1m" placeholder:"DURATION" help:"Close a connection that sits idle this long between requests, or that has not sent a request's headers within it (at most 10s)."`
	MaxStreams  flagvalue.AtLeastOne       `default:"64" placeholder:"N" help:"Serve at most N event and dashboard streams at once, a quarter of them to one client address; more are answered 503 with Retry-After."`
}

func (serveCmd) Help() string {
	return `Serves this workspace over HTTP: a JSON API (status, runs, events and a
resumable event stream, stop, pause, resume, answer; /api/openapi.json
describes it) and a live web page at /. It only reads the workspace's files and
never takes a lock, so it runs beside any loop or autopilot and restarts freely.
Requests that change something need the token of .ralph/serve.token, printed
once at start in the page's address.

Examples:
  ralph serve
  ralph serve --addr 127.0.0.1:0
  curl -H "Authorization: Bearer $(cat .ralph/serve.token)" -X POST localhost:7777/api/pause`
}

func (c *serveCmd) Run(g *globals) error {
	return serve.Run(g.signals.Context(), g.stdout, serve.Options{Dir: g.Dir, Addr: c.Addr,
		IdleTimeout: time.Duration(c.IdleTimeout), MaxStreams: int(c.MaxStreams), Redactor: readerRedactor(g.Dir)})
}
