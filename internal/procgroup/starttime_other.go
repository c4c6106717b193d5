//go:build !linux

package procgroup

// StartTime is "" where processes cannot be told apart by their start.
func StartTime(int) string { return "" }

// procStat knows nothing where there is no /proc.
func procStat(int) (state, start string) { return "", "" }
