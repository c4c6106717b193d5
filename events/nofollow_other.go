//go:build !unix

package events

// noFollow is 0 where open has no flag to refuse a link; the callers check
// for one first.
const noFollow = 0
