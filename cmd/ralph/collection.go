package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/hats"
)

// loadConfigWith is loadConfig with a hat collection (-H) laid over the
// config when hatsArg is set. Without -c and without a ralph.yml, the
// collection is laid over the defaults, so `ralph loop -H tdd -p …` works
// in any directory.
func loadConfigWith(dir string, paths []string, hatsArg string) (*config.Config, string, error) {
	if hatsArg == "" {
		return loadConfig(dir, paths)
	}
	col, err := resolveCollection(dir, hatsArg)
	if err != nil {
		return nil, "", err
	}
	if len(paths) == 0 {
		found, err := config.Find(dir)
		switch {
		case err == nil:
			paths = []string{found}
		case !errors.Is(err, config.ErrNotFound):
			return nil, "", err
		}
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			paths[i] = filepath.Join(dir, p)
		}
	}
	cfg, err := config.LoadWithCollection(paths, col)
	if err != nil {
		return nil, "", err
	}
	return cfg, cfg.Path, nil
}

// resolveCollection reads -H: a file if there is one at that path, else a
// preset of that name.
func resolveCollection(dir, arg string) (config.Collection, error) {
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return config.Collection{Name: path, Data: data}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return config.Collection{}, withHint(fmt.Errorf("read hat collection %s: %w", path, err), "check the file's permissions")
	}
	if p, ok := examples.Lookup(arg); ok {
		return config.Collection{Name: p.Path(), Data: p.Data, Dir: dir}, nil
	}
	return config.Collection{}, withHint(fmt.Errorf("-H %s: no file %s and no preset called %q", arg, path, arg),
		"name a preset ("+strings.Join(examples.Names(), ", ")+") or a file with hats:")
}

// newRegistry builds the hat registry of a loaded config. Its problems
// (a hat without triggers, a bad trigger) become config problems at the
// hat's file:line, so the user knows where to look.
func newRegistry(cfg *config.Config, path string) (*hats.Registry, error) {
	reg, err := hats.NewRegistry(cfg.HatList(), hats.WithCompletionTopic(cfg.EventLoop.CompletionPromise))
	if err != nil {
		return nil, hatProblems(cfg, path, err)
	}
	return reg, nil
}

// hatProblems places each *hats.HatError in err at its hat's definition.
func hatProblems(cfg *config.Config, path string, err error) error {
	var problems []config.Problem
	for _, e := range joinedErrors(err) {
		p := config.Problem{File: path, Msg: e.Error()}
		var he *hats.HatError
		if errors.As(e, &he) && he.Index >= 0 && he.Index < len(cfg.Hats) {
			if h := cfg.Hats[he.Index]; h.File != "" {
				p.File, p.Line = h.File, h.Line
			}
		}
		problems = append(problems, p)
	}
	return &config.Error{Problems: problems}
}

// joinedErrors takes apart an errors.Join.
func joinedErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// topologyProblems runs the static checks of the hat topology and turns
// the findings into config problems, each placed at the hat's (or the
// gate's) file:line where that is known, else at the config file.
func topologyProblems(cfg *config.Config, reg *hats.Registry, path string) (errs, warnings []config.Problem) {
	for _, f := range hats.Check(reg, cfg.Topology()) {
		p := config.Problem{File: path, Msg: f.Message, Hint: f.Hint}
		switch {
		case f.Where != "":
			p.File, p.Line = splitWhere(f.Where)
		case f.Hat != "":
			if h, ok := findHat(cfg, f.Hat); ok {
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

func findHat(cfg *config.Config, id string) (config.Hat, bool) {
	for _, h := range cfg.Hats {
		if h.ID == id {
			return h, true
		}
	}
	return config.Hat{}, false
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
