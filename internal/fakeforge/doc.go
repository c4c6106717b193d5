// Package fakeforge serves, on 127.0.0.1, the subset of the GitHub REST,
// GitLab REST and Linear GraphQL APIs that ralph calls, for tests: one
// sub-package per service, each keeping its issues and pull requests in
// memory, shaping its answers after the service's documented examples
// (recorded in its testdata, their sources named in the README beside
// them), and, for pull requests, acting on a real bare git repository:
// merging one on the fake merges it there.
//
// Every fake records the requests it was sent, so a test can say which
// write endpoints were called (none, for a dry run), and can be told to
// refuse the next requests for a rate limit.
package fakeforge
