package fileholders

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// lsofTimeout bounds one lsof run: it answers a message, and a system
// with a hung network mount must not hold ralph up.
const lsofTimeout = 5 * time.Second

// findWithLsof is Find where there is no /proc (macOS, the BSDs): lsof
// lists the processes that have path open and the lock each holds through
// it. Without lsof the answer is errors.ErrUnsupported. It is built on
// every platform so that Linux's tests check it against /proc.
func findWithLsof(path string) ([]Process, error) {
	bin, err := exec.LookPath("lsof")
	if err != nil {
		return nil, fmt.Errorf("no lsof to list who has %s open: %w", path, errors.ErrUnsupported)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lsofTimeout)
	defer cancel()
	// -n and -P: no name lookups; -w: no warnings about other mounts;
	// -F pcl: a field per line (pid, command name, lock).
	out, err := exec.CommandContext(ctx, bin, "-n", "-P", "-w", "-F", "pcl", "--", path).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && len(out) == 0 {
		return nil, nil // lsof's way of saying no process has it open
	}
	if err != nil {
		return nil, fmt.Errorf("lsof %s: %w", path, err)
	}
	return parseLsof(out, os.Getpid()), nil
}

// parseLsof reads lsof's -F pcl output: a "p<pid>" line starts a process,
// "c<name>" names it, and an "l<char>" line per descriptor gives the lock
// held through it (a space for none; r, R, w, W, u, U, x and X are locks
// of some kind). self is left out.
func parseLsof(out []byte, self int) []Process {
	var procs []Process
	cur := -1 // the index of the process the lines are about; -1: none
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		field, value := line[0], line[1:]
		switch field {
		case 'p':
			cur = -1
			if pid, err := strconv.Atoi(value); err == nil && pid != self {
				procs = append(procs, Process{PID: pid})
				cur = len(procs) - 1
			}
		case 'c':
			if cur >= 0 {
				procs[cur].Command = truncateCommand(value)
			}
		case 'l':
			if cur >= 0 && value != "" && strings.ContainsRune("rRwWuUxX", rune(value[0])) {
				procs[cur].Locks = true
			}
		}
	}
	return procs
}
