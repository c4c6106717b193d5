//go:build !linux

package treewatch

// reliable is false where fsnotify is not inotify: kqueue watches files one
// by one (a descriptor each), and other back ends miss changes under load.
func reliable([]string) bool { return false }

func watchBudget() int { return 0 }
