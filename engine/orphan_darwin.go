package engine

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// groupEnvirons is unsupported: macOS shows no other process's
// environment.
func groupEnvirons(int) ([][]string, error) { return nil, errors.ErrUnsupported }

// processStart is when process pid started (kern.proc.pid), to the
// microsecond: with the pid, it names one process.
func processStart(pid int) (string, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", err
	}
	if int(k.Proc.P_pid) != pid {
		return "", errors.New("no process " + strconv.Itoa(pid))
	}
	tv := k.Proc.P_starttime
	return fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec), nil
}
