// Package flagvalue holds command-line value types that check their range
// as kong parses them, so a value that means nothing (--max-iterations 0,
// --last -3) is a usage error with exit 3 instead of being read as "not
// given" and silently replaced by a default.
package flagvalue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
)

// AtLeastOne is a count that must be 1 or more. Its zero value means the
// flag was not given, which no accepted value can be mistaken for.
type AtLeastOne int

func (c *AtLeastOne) Decode(ctx *kong.DecodeContext) error {
	n, err := popInt(ctx)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("must be 1 or more, got %d", n)
	}
	*c = AtLeastOne(n)
	return nil
}

// ZeroOrMore is a count where 0 means something (the check is off, show
// none). set tells a given 0 from a flag left out.
type ZeroOrMore struct {
	n   int
	set bool
}

func (c *ZeroOrMore) Decode(ctx *kong.DecodeContext) error {
	n, err := popInt(ctx)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("must be 0 or more, got %d", n)
	}
	*c = ZeroOrMore{n: n, set: true}
	return nil
}

// Count is the count given, 0 when the flag was left out.
func (c ZeroOrMore) Count() int { return c.n }

// Value is the count when the flag was given, nil otherwise.
func (c ZeroOrMore) Value() *int {
	if !c.set {
		return nil
	}
	n := c.n
	return &n
}

// RuntimeLimit is a length of time given as a Go duration (90m, 2h30m) or a
// number of seconds (5400), as event_loop.max_runtime_seconds counts them;
// 0 means no limit. set tells a given 0 from a flag left out.
type RuntimeLimit struct {
	d   time.Duration
	set bool
}

func (r *RuntimeLimit) Decode(ctx *kong.DecodeContext) error {
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return err
	}
	s := strings.TrimSpace(fmt.Sprint(t.Value))
	d, err := ParseRuntime(s)
	if err != nil {
		return err
	}
	*r = RuntimeLimit{d: d, set: true}
	return nil
}

// ParseRuntime reads a Go duration (90m) or a whole number of seconds.
func ParseRuntime(s string) (time.Duration, error) {
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

// Value is the limit when the flag was given, nil otherwise.
func (r RuntimeLimit) Value() *time.Duration {
	if !r.set {
		return nil
	}
	d := r.d
	return &d
}

// PositiveDuration is a length of time that must be more than 0, given as
// a Go duration (90s, 2m).
type PositiveDuration time.Duration

func (p *PositiveDuration) Decode(ctx *kong.DecodeContext) error {
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return err
	}
	s := strings.TrimSpace(fmt.Sprint(t.Value))
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 90s or 2m", s)
	}
	if d <= 0 {
		return fmt.Errorf("must be more than 0, got %s", s)
	}
	*p = PositiveDuration(d)
	return nil
}

// OptionalValue is a flag whose value may be left out: --worktree,
// --worktree NAME and --worktree=NAME. The word after the flag is taken as
// its value unless it is a flag itself, so a command with such a flag
// must take no positional arguments, which would be mistaken for it.
type OptionalValue struct {
	// Given says the flag was given, with or without a value.
	Given bool
	// Value is the value given; "" when it was left out.
	Value string
}

func (o *OptionalValue) Decode(ctx *kong.DecodeContext) error {
	*o = OptionalValue{Given: true}
	next := ctx.Scan.Peek()
	if !next.IsValue() {
		return nil
	}
	o.Value = fmt.Sprint(ctx.Scan.Pop().Value)
	if o.Value == "" {
		return errors.New("the value after '=' is empty: give one, or leave out the '='")
	}
	return nil
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

// ParseSince reads a --since value: a duration back from now (10m, 7d), or a
// point in time. Times without a zone are in now's location; a time of
// day alone means today.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := ParseAge(s); err == nil {
		if d < 0 {
			return time.Time{}, hinted{fmt.Sprintf("--since %s: the duration is negative", s), "give how far back to look, e.g. --since 10m"}
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location()), nil
		}
	}
	return time.Time{}, hinted{fmt.Sprintf("--since %q is neither a duration nor a time", s),
		"use a duration (10m, 1h30m, 7d) or a time (2026-11-22T10:00:00Z, '2026-11-22 10:00', 10:00)"}
}

// hinted is an error that says how to fix it; ralph prints the hint below
// the error.
type hinted struct{ msg, hint string }

func (e hinted) Error() string { return e.msg }
func (e hinted) Hint() string  { return e.hint }

// Age is how old something must be, given as a Go duration (36h, 90m) or
// in days and weeks (7d, 2w, 1d12h), as `ralph runs clean --max-age` takes
// it. It must be more than 0.
type Age time.Duration

func (a *Age) Decode(ctx *kong.DecodeContext) error {
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return err
	}
	s := strings.TrimSpace(fmt.Sprint(t.Value))
	d, err := ParseAge(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("must be more than 0, got %s", s)
	}
	*a = Age(d)
	return nil
}

// ParseAge reads a duration that may start with days and weeks (7d, 2w,
// 1w2d, 1d12h), which time.ParseDuration does not take: a day is 24
// hours.
func ParseAge(s string) (time.Duration, error) {
	rest, total := s, time.Duration(0)
	for _, unit := range []struct {
		suffix byte
		size   time.Duration
	}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}} {
		i := strings.IndexByte(rest, unit.suffix)
		if i <= 0 {
			continue
		}
		n, err := strconv.ParseUint(rest[:i], 10, 31)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 7d, 36h or 90m", s)
		}
		total += time.Duration(n) * unit.size
		rest = rest[i+1:]
	}
	if rest == "" && total > 0 {
		return total, nil
	}
	d, err := time.ParseDuration(rest)
	if err != nil || (d < 0 && total > 0) {
		return 0, fmt.Errorf("%q is not a duration such as 7d, 36h or 90m", s)
	}
	return total + d, nil
}
