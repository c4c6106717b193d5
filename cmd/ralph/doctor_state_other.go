//go:build !unix

package main

// groupAlive is false where an agent's processes die with the ralph that
// started them (a job object, on Windows): no group outlives it.
func groupAlive(int) bool { return false }
