//go:build !unix

package treewatch

import (
	"os"
	"time"
)

// noFollow is 0 where open has no flag to refuse a link.
const noFollow = 0

// touch sets path's times to now.
func touch(path string, now time.Time) error { return os.Chtimes(path, now, now) }
