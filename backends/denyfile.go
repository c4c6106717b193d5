package backends

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// denyFileSpec describes a CLI whose deny list is a file it is pointed at
// on its command line, rather than a flag's values or a variable: the
// Gemini CLI's policy files (see gemini.go).
type denyFileSpec struct {
	// flag takes the file's path, e.g. "--policy".
	flag string
	// name is the file's name, whose extension the CLI may read it by.
	name string
	// render is the file's contents that deny tools.
	render func(tools []string) []byte
}

// newDenyFile writes one run's deny file in a folder of its own and adds
// flag PATH to args (last, after cli.args, as the usage file's flag). It
// returns the folder, which the caller removes once the run is over; ""
// without a spec or tools, when it does nothing.
func newDenyFile(spec *denyFileSpec, tools, args []string) (string, []string, error) {
	if spec == nil || len(tools) == 0 {
		return "", args, nil
	}
	dir, err := os.MkdirTemp("", "ralph-deny-")
	if err != nil {
		return "", nil, fmt.Errorf("make a folder for the agent's deny list: %w", err)
	}
	path := filepath.Join(dir, spec.name)
	if err := os.WriteFile(path, spec.render(tools), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("write the agent's deny list: %w", err)
	}
	return dir, append(slices.Clip(args), spec.flag, path), nil
}

// tomlStrings is tools as a TOML array of basic strings: JSON's string
// escapes are TOML's.
func tomlStrings(tools []string) string {
	data, _ := json.Marshal(tools) // strings: cannot fail
	return string(data)
}
