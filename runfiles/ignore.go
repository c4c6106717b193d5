package runfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// ignoreMarker opens every .gitignore ralph writes. A file without it is
// the user's own, and ralph leaves it as it is.
const ignoreMarker = "# Written by ralph"

// ignoreEverything keeps all of .ralph/ out of git, this file included.
const ignoreEverything = ignoreMarker + `: its state, lock, event logs and raw agent output
# stay out of your commits. Remove this first line to manage the file yourself.
*
`

// ignoreAllButMemories keeps agent/memories.md visible, so a team can
// commit the long-term memories and share them (memories.shared: true).
const ignoreAllButMemories = ignoreMarker + `: its state, lock, event logs and raw agent output
# stay out of your commits; agent/memories.md is shared (memories.shared: true).
# Remove this first line to manage the file yourself.
*
!/agent/
/agent/*
!/agent/memories.md
`

// IgnoreOwnFiles makes the .ralph directory dir ignore itself: it writes
// dir/.gitignore, or rewrites one ralph wrote when shareMemories changed.
// A .gitignore the user wrote (without ralph's first line) is kept.
func IgnoreOwnFiles(dir string, shareMemories bool) error {
	want := []byte(ignoreEverything)
	if shareMemories {
		want = []byte(ignoreAllButMemories)
	}
	path := filepath.Join(dir, IgnoreFile)
	have, err := ralphdir.ReadFile(dir, path)
	switch {
	case err == nil && (bytes.Equal(have, want) || !bytes.HasPrefix(have, []byte(ignoreMarker))):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	if err := ralphdir.WriteFileAtomic(dir, path, want); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// IgnoreOwnFilesIfMissing writes dir/.gitignore when there is none yet,
// for commands that do not read the config (ralph memory add); the next
// loop settles memories.shared.
func IgnoreOwnFilesIfMissing(dir string) error {
	if fi, err := os.Lstat(filepath.Join(dir, IgnoreFile)); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	return IgnoreOwnFiles(dir, false)
}
