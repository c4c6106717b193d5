package backends

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// usageFileSpec describes a CLI that writes its token counts to a file of
// the caller's choosing when it exits, rather than on stdout. Copilot CLI
// is one: its JSON output leaves them out (see copilot.go).
type usageFileSpec struct {
	// flag takes the file's path, e.g. "--usage-output-file".
	flag string
	// read turns the file's contents into usage.
	read func(data []byte) (events.Usage, error)
}

// usageFile is the file one run's CLI writes its usage to.
type usageFile struct {
	spec    *usageFileSpec
	path    string
	cleanup func()
}

// newUsageFile picks the path for one run and adds the flag to args. When
// the user already passes the flag (in cli.args), their file is read and
// left in place.
func newUsageFile(spec *usageFileSpec, args []string) (*usageFile, []string, error) {
	if spec == nil {
		return nil, args, nil
	}
	if path, ok := flagValue(args, spec.flag); ok {
		return &usageFile{spec: spec, path: path, cleanup: func() {}}, args, nil
	}
	dir, err := os.MkdirTemp("", "ralph-usage-")
	if err != nil {
		return nil, nil, fmt.Errorf("make a folder for the agent's usage file: %w", err)
	}
	f := &usageFile{spec: spec, path: filepath.Join(dir, "usage.json"), cleanup: func() { _ = os.RemoveAll(dir) }}
	return f, append(slices.Clip(args), spec.flag, f.path), nil
}

// dir is the folder the CLI writes the file in, which a confined agent
// must be able to write; "" without a usage file.
func (f *usageFile) dir() string {
	if f == nil {
		return ""
	}
	return filepath.Dir(f.path)
}

// flagValue finds "--flag VALUE" or "--flag=VALUE" in args.
func flagValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

// apply adds the file's usage to res when stdout reported none (a later
// CLI version may print it there too; it must not count twice), and
// reports it. A missing file is no error: the CLI was killed or failed
// before it wrote one. A file that does not parse is reported as a warning
// in the activity stream, because the run itself still stands.
func (f *usageFile) apply(res *events.AgentResult, report func(events.Activity)) {
	if f == nil {
		return
	}
	defer f.cleanup()
	if res.Usage != (events.Usage{}) {
		return
	}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var u events.Usage
	if err == nil {
		u, err = f.spec.read(data)
	}
	if err != nil {
		report(events.Activity{Kind: events.ActivityError, Text: fmt.Sprintf("read the agent's usage file %s: %v", f.path, err)})
		return
	}
	if u == (events.Usage{}) {
		return
	}
	res.Usage = u
	report(events.Activity{Kind: events.ActivityUsage, Usage: u})
}
