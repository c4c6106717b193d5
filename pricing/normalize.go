package pricing

import (
	"regexp"
	"strings"
)

var (
	// contextSuffix is a context-window variant's suffix ("[1m]"), priced as
	// the model (Claude Code names claude-opus-4-8[1m] in its usage).
	contextSuffix = regexp.MustCompile(`\[[^\]]*\]$`)
	// dateSuffix is a dated snapshot's suffix: "-20251001", "-2025-10-01" or
	// Vertex AI's "@20251001".
	dateSuffix = regexp.MustCompile(`[-@](\d{8}|\d{4}-\d{2}-\d{2})$`)
)

// key is model with what Lookup ignores taken away: case, surrounding
// space, a provider prefix (all up to the last "/"), a context suffix, a
// dated suffix, and dots (spelled "-").
func key(model string) string {
	k := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(k, "/"); i >= 0 {
		k = k[i+1:]
	}
	k = contextSuffix.ReplaceAllString(k, "")
	k = dateSuffix.ReplaceAllString(k, "")
	// OpenRouter and pi write "claude-opus-4.8" where Anthropic writes "4-8".
	return strings.ReplaceAll(k, ".", "-")
}
