package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
)

// Flag types that check their range as kong parses them, so a value that
// means nothing (--max-iterations 0, --last -3) is a usage error with exit 3
// instead of being read as "not given" and silently replaced by a default.

// atLeastOne is a count that must be 1 or more. Its zero value means the
// flag was not given, which no accepted value can be mistaken for.
type atLeastOne int

func (c *atLeastOne) Decode(ctx *kong.DecodeContext) error {
	n, err := popInt(ctx)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("must be 1 or more, got %d", n)
	}
	*c = atLeastOne(n)
	return nil
}

// zeroOrMore is a count where 0 means something (the check is off, show
// none). set tells a given 0 from a flag left out.
type zeroOrMore struct {
	n   int
	set bool
}

func (c *zeroOrMore) Decode(ctx *kong.DecodeContext) error {
	n, err := popInt(ctx)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("must be 0 or more, got %d", n)
	}
	*c = zeroOrMore{n: n, set: true}
	return nil
}

// value is the count when the flag was given, nil otherwise.
func (c zeroOrMore) value() *int {
	if !c.set {
		return nil
	}
	n := c.n
	return &n
}

// runtimeLimit is a length of time given as a Go duration (90m, 2h30m) or a
// number of seconds (5400), as event_loop.max_runtime_seconds counts them;
// 0 means no limit. set tells a given 0 from a flag left out.
type runtimeLimit struct {
	d   time.Duration
	set bool
}

func (r *runtimeLimit) Decode(ctx *kong.DecodeContext) error {
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return err
	}
	s := strings.TrimSpace(fmt.Sprint(t.Value))
	d, err := parseRuntime(s)
	if err != nil {
		return err
	}
	*r = runtimeLimit{d: d, set: true}
	return nil
}

func parseRuntime(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("must be 0 (no limit) or more, got %d", n)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a number of seconds nor a duration such as 90m or 2h30m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must be 0 (no limit) or more, got %s", s)
	}
	return d, nil
}

// value is the limit when the flag was given, nil otherwise.
func (r runtimeLimit) value() *time.Duration {
	if !r.set {
		return nil
	}
	d := r.d
	return &d
}

// popInt reads the flag's value as a whole number.
func popInt(ctx *kong.DecodeContext) (int, error) {
	t, err := ctx.Scan.PopValue("N")
	if err != nil {
		return 0, err
	}
	switch v := t.Value.(type) {
	case int:
		return v, nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("expected a whole number but got %q", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("expected a whole number but got %v", t.Value)
}
