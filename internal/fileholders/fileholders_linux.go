package fileholders

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Find returns the processes, other than the caller, that have path open,
// in pid order. Processes that vanish or whose descriptors cannot be read
// (another user's, without privilege) are skipped: the answer is the best
// /proc can give at one instant, not a guarantee.
func Find(path string) ([]Process, error) {
	var target syscall.Stat_t
	if err := syscall.Stat(path, &target); err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := os.Getpid()
	var found []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if open, locks := openFile(pid, target); open {
			found = append(found, Process{PID: pid, Command: command(pid), Locks: locks})
		}
	}
	return found, nil
}

// openFile reports whether one of pid's descriptors is the file target
// describes, and whether a lock is held through one of them. Descriptors
// are compared by device and inode, so a path renamed or reached through a
// symlink still matches. The kernel lists the locks held through a
// descriptor in its fdinfo, as "lock:" lines.
func openFile(pid int, target syscall.Stat_t) (open, locks bool) {
	procDir := filepath.Join("/proc", strconv.Itoa(pid))
	fds, err := os.ReadDir(filepath.Join(procDir, "fd"))
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(procDir, "fd", fd.Name()), &st) != nil || st.Dev != target.Dev || st.Ino != target.Ino {
			continue
		}
		open = true
		info, _ := os.ReadFile(filepath.Join(procDir, "fdinfo", fd.Name()))
		locks = locks || bytes.Contains(info, []byte("\nlock:"))
	}
	return open, locks
}

// command is pid's command line, arguments joined by spaces, or its name
// (comm) when the command line is empty, as it is for a process between
// fork and exec whose parent has died.
func command(pid int) string {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
	s := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
	if s == "" {
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		s = strings.TrimSpace(string(comm))
	}
	return truncateCommand(s)
}

// Locks reports whether process pid holds a lock through a descriptor of
// the file at path. It only reads /proc, so asking never takes, even for
// an instant, a lock another process could be trying to take.
func Locks(pid int, path string) (bool, error) {
	var target syscall.Stat_t
	if err := syscall.Stat(path, &target); err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	_, locks := openFile(pid, target)
	return locks, nil
}
