//go:build race

package main

// raceBuild: this test binary, and so every ralph the tests start, runs
// under the race detector, which holds several times the memory ralph
// would.
const raceBuild = true
