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
// `ralph loop -H tdd -p …` works anywhere. opts adds the user's config
// under the files and --set over them. It returns the config and the file
// its problems are placed at.
func LoadIn(dir string, paths []string, col *Collection, opts Options) (*Config, string, error) {
	paths, err := filesIn(dir, paths)
	if err != nil && (col == nil || !errors.Is(err, ErrNotFound)) {
		return nil, "", err
	}
	cfg, err := loadLayered(paths, col, opts)
	if err != nil {
		return nil, "", err
	}
	return cfg, cfg.Path, nil
}

// LoadFiles loads the config as LoadIn does without a collection, and
// returns its files as absolute paths, for a command that hands them on
// (the autopilot gives them to each task's loop as -c). The files are the
// project's: the user's config and --set of opts are not among them.
func LoadFiles(dir string, paths []string, opts Options) (*Config, []string, error) {
	files, err := filesIn(dir, paths)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadLayered(files, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	return cfg, files, nil
}

// filesIn is paths made absolute against dir, or the file Find finds in
// dir when paths is empty.
func filesIn(dir string, paths []string) ([]string, error) {
	paths = slices.Clone(paths)
	if len(paths) == 0 {
		found, err := Find(dir)
		if err != nil {
			return nil, err
		}
		return []string{found}, nil
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			paths[i] = filepath.Join(dir, p)
		}
	}
	return paths, nil
}
