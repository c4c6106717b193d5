// Package layering holds the test that keeps ralph's packages pointing
// inward, as docs/architecture.md#packages lays them out, and the one
// that keeps built programs out of the repository. It has no code of its own.
package layering
