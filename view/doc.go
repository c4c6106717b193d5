// Package view renders a run for people and programs: plain lines, the live
// panel, the headless JSON stream, event tables
// and the listing of a log that `ralph events` filters and follows. Each is a thin view over
// one model of a run, the model a TUI and a web dashboard will share.
package view
