// Package serve is `ralph serve`: an HTTP JSON API over a workspace (its
// loop or autopilot, their logs, a resumable Server-Sent Events stream of
// a log, and the requests stop, pause, resume and answer) and the web page
// at / that shows it, live. Both are thin views over view/api: they read
// the workspace's files and never take a lock.
//
// It owns what is HTTP's: the routes and their OpenAPI description
// (openapi.json), errors as {"error", "hint"} with a status that says what
// kind they are, the bearer token of .ralph/serve.token that every request
// that changes something needs (and every request, off loopback), the
// streams' wire format and keepalives, what a client may hold (streams in
// all and per client address, all on one shared kernel watcher, the event
// streams of one log on one reader of it (api.Follows); idle
// connections closed; a client without the token let go at once), and
// serving only the embedded page's files.
package serve
