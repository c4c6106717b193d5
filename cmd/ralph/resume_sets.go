package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/redact"
)

// refuseMaskedSets refuses to go on with a run whose remembered --set held
// a secret's value, unless given sets that key again: the run's log has
// the value masked ([redacted:NAME]), and laying the mask over the config
// would quietly run with a wrong key. again is the command that goes on,
// "ralph loop --resume" or "ralph autopilot". NAME is whichever variable
// ralph found the value in, the user's or one the config sets, so the
// hint asks for the value, not a variable the shell may not have.
func refuseMaskedSets(remembered, given []string, again string) error {
	for _, s := range remembered {
		key, value, _ := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		names := redact.Masked(value)
		if len(names) == 0 || slices.ContainsFunc(given, func(g string) bool { return setKey(g) == key }) {
			continue
		}
		return withHint(fmt.Errorf("--set %s: the run was started with a secret there (the value of %s), which ralph never writes down, so it cannot go on with it",
			key, strings.Join(names, " and ")),
			fmt.Sprintf("give it again: %s --set %s=<the value>", again, key))
	}
	return nil
}

// setKey is the key.path of a --set assignment.
func setKey(s string) string {
	key, _, _ := strings.Cut(s, "=")
	return strings.TrimSpace(key)
}
