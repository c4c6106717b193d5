// Package pricing owns what the models behind the agent CLIs cost: the
// embedded price table (prices.csv, the vendors' public list prices with
// the date and page each row was taken from), the overrides a config's
// `pricing:` section adds, and the cost of an iteration's tokens.
//
// ralph computes a cost from tokens only when the agent does not report
// one itself (Claude Code does; the others print token counts). A model
// with no row has no price: Lookup says so rather than guess from a
// similar name, and callers report the cost as unknown, never as zero.
package pricing
