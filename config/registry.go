package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/hats"
)

// Registry builds the hat registry of a loaded config. Its problems (a hat
// without triggers, a bad trigger) become config problems at the hat's
// file:line, so the user knows where to look; path is where the others
// are placed.
func (c *Config) Registry(path string) (*hats.Registry, error) {
	reg, err := hats.NewRegistry(c.HatList(), hats.WithCompletionTopic(c.EventLoop.CompletionPromise))
	if err != nil {
		return nil, c.hatProblems(path, err)
	}
	return reg, nil
}

// hatProblems places each *hats.HatError in err at its hat's definition.
func (c *Config) hatProblems(path string, err error) error {
	var problems []Problem
	for _, e := range joinedErrors(err) {
		p := Problem{File: path, Msg: e.Error()}
		var he *hats.HatError
		if errors.As(e, &he) && he.Index >= 0 && he.Index < len(c.Hats) {
			if h := c.Hats[he.Index]; h.File != "" {
				p.File, p.Line = h.File, h.Line
			}
		}
		problems = append(problems, p)
	}
	return &Error{Problems: problems}
}

// joinedErrors takes apart an errors.Join.
func joinedErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TopologyProblems runs the static checks of the hat topology and turns
// the findings into config problems, each placed at the hat's (or the
// gate's) file:line where that is known, else at path.
func (c *Config) TopologyProblems(reg *hats.Registry, path string) (errs, warnings []Problem) {
	for _, f := range hats.Check(reg, c.Topology()) {
		p := Problem{File: path, Msg: f.Message, Hint: f.Hint}
		switch {
		case f.Where != "":
			p.File, p.Line = splitWhere(f.Where)
		case f.Hat != "":
			if h, ok := c.FindHat(f.Hat); ok {
				p.File, p.Line = h.File, h.Line
			}
		}
		if f.Severity == hats.SeverityError {
			errs = append(errs, p)
		} else {
			warnings = append(warnings, p)
		}
	}
	return errs, warnings
}

// FindHat is the hat with that id under hats:.
func (c *Config) FindHat(id string) (Hat, bool) {
	for _, h := range c.Hats {
		if h.ID == id {
			return h, true
		}
	}
	return Hat{}, false
}

// splitWhere takes "file:line" apart.
func splitWhere(where string) (string, int) {
	i := strings.LastIndexByte(where, ':')
	if i < 0 {
		return where, 0
	}
	n, err := strconv.Atoi(where[i+1:])
	if err != nil {
		return where, 0
	}
	return where[:i], n
}
