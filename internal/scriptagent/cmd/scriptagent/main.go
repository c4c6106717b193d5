// Command scriptagent is the scripted test agent (package
// internal/scriptagent) as a program of its own. cmd/ralph's tests build it
// once a run and give ralph its path: a small binary starts in a few
// milliseconds, where the registered command (the whole test binary, built
// with -race in the unit tests) takes a few hundred on a busy machine, at
// every iteration of every test's loop.
package main

import "github.com/ralph-loop/ralph/internal/scriptagent"

func main() { scriptagent.Main() }
