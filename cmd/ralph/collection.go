package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
)

// loadConfigWith loads the config as config.LoadIn does, with the user's
// config under it, the hat collection that hatsArg (-H) names laid over it
// when it is set, and the --set assignments sets over all.
func loadConfigWith(dir string, paths []string, hatsArg string, sets []string) (*config.Config, string, error) {
	if hatsArg == "" {
		return config.LoadIn(dir, paths, nil, configOptions(sets))
	}
	col, err := resolveCollection(dir, hatsArg)
	if err != nil {
		return nil, "", err
	}
	return config.LoadIn(dir, paths, &col, configOptions(sets))
}

// configOptions are the layers every command lays around the project's
// config: the user's own file (config.UserFile) under it, and sets
// (--set) over it.
func configOptions(sets []string) config.Options {
	return config.Options{User: config.UserFile(os.Getenv), Sets: sets}
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
