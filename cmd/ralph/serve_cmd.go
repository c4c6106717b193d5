package main

import "github.com/ralph-loop/ralph/view/serve"

type serveCmd struct {
	Addr string `default:"127.0.0.1:7777" placeholder:"HOST:PORT" help:"Listen here (port 0: any free port). Off loopback, every request needs the token."`
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
		Redactor: readerRedactor(g.Dir)})
}
