package redact

import (
	"os"
	"strings"
)

// NamesVar is the variable in which ralph hands the names listed under
// redact: to the processes it starts, so that `ralph emit`, which runs in
// an agent's environment, hides the same values as the loop.
const NamesVar = "RALPH_REDACT"

// NamesEnv is the NamesVar entry that hands names on; none when there are
// no names.
func NamesEnv(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return []string{NamesVar + "=" + strings.Join(names, ",")}
}

// FromEnvironment is the Redactor of a process ralph started: it hides the
// secrets of its own environment and the variables NamesVar lists.
func FromEnvironment() *Redactor {
	var names []string
	if v := os.Getenv(NamesVar); v != "" {
		names = strings.Split(v, ",")
	}
	return New(os.Environ(), names)
}
