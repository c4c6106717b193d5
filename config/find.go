package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// findNames are the files Find looks for, in order.
var findNames = []string{DefaultPath, "ralph.yaml", "ralph.json"}

// minimalConfig is the example in the "no ralph.yml" hint.
const minimalConfig = `  cli:
    backend: claude
  event_loop:
    prompt_file: PROMPT.md
    completion_promise: LOOP_COMPLETE
    max_iterations: 100`

// Find is the config file to use in dir when none was given with -c:
// ralph.yml, else ralph.yaml, else ralph.json. When there is none, the
// error wraps ErrNotFound and says how to create one.
func Find(dir string) (string, error) {
	for _, name := range findNames {
		path := filepath.Join(dir, name)
		_, err := os.Stat(path)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", problemError(Problem{File: path, Msg: "find config: " + pathReason(err),
				Hint: "check the permissions of " + dir + ", or pass -c FILE"}, err)
		}
	}
	return "", problemError(Problem{
		Msg: fmt.Sprintf("no %s in %s", DefaultPath, dir),
		Hint: "run `ralph init` to write one, pass -c FILE, or create " + DefaultPath + " with at least:\n" +
			minimalConfig + "\nand put the task in PROMPT.md",
	}, ErrNotFound)
}
