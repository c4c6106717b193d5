package procgroup

import (
	"os"
	"strconv"
	"syscall"
)

// scan lists the processes, other than ralph and the group's members,
// whose environment carries the mark, from /proc. A process that has
// exited (a zombie) has none. The members are left to the group's own
// handling, which reaps them only once the leader has been waited for.
func (s *strays) scan() []int {
	s.last = s.last[:0]
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == s.pgid {
			continue
		}
		if marked(pid, s.mark) && !s.member(pid) {
			s.last = append(s.last, pid)
		}
	}
	return s.last
}

// marked reports whether process pid carries m. Another user's processes
// cannot be read, and are not ralph's.
func marked(pid int, m Mark) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && carries(data, m)
}

// kill signals pid if it still carries the mark. os.FindProcess holds a
// pidfd on Linux, taken before the check: if the process exits and its pid
// is reused meanwhile, the signal goes nowhere rather than to a stranger.
func (s *strays) kill(pid int, sig syscall.Signal) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	defer func() { _ = p.Release() }()
	if marked(pid, s.mark) {
		_ = p.Signal(sig)
	}
}

// member reports whether pid is in the group (0: no group).
func (s *strays) member(pid int) bool {
	if s.pgid == 0 {
		return false
	}
	pgid, err := syscall.Getpgid(pid)
	return err == nil && pgid == s.pgid
}
