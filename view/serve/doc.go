// Package serve is `ralph serve`: an HTTP JSON API over a workspace (its
// loop or autopilot, their logs, a resumable Server-Sent Events stream of
// a log, and the requests stop, pause, resume and answer) and the web page
// at / that shows it, live. Both are thin views over view/api: they read
// the workspace's files and never take a lock.
package serve
