package config

import (
	"errors"
	"path/filepath"
	"slices"
)

// LoadIn loads a config the way ralph's commands do: the files at paths,
// relative to dir, or the one [Find] finds in dir when paths is empty.
// With a collection (ralph loop -H) laid over them, a directory without a
// config file is no error: the collection is laid over the defaults, so
// `ralph loop -H tdd -p …` works anywhere. It returns the config and the
// file its problems are placed at.
func LoadIn(dir string, paths []string, col *Collection) (*Config, string, error) {
	paths = slices.Clone(paths)
	if len(paths) == 0 {
		found, err := Find(dir)
		switch {
		case err == nil:
			paths = []string{found}
		case col == nil || !errors.Is(err, ErrNotFound):
			return nil, "", err
		}
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			paths[i] = filepath.Join(dir, p)
		}
	}
	if col == nil {
		cfg, err := Load(paths...)
		if err != nil {
			return nil, "", err
		}
		return cfg, paths[len(paths)-1], nil
	}
	cfg, err := LoadWithCollection(paths, *col)
	if err != nil {
		return nil, "", err
	}
	return cfg, cfg.Path, nil
}
