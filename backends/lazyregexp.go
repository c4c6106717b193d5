package backends

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr when first used. The patterns that read an
// agent's errors are needed once one fails, and every ralph process links
// this package: the sandbox's launcher, re-executed for every confined
// iteration, would otherwise compile them all as it starts. The package's
// tests use each one, so a bad pattern fails them, not a user's run.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
