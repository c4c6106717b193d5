package engine

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupEnvirons returns the environments of the processes in the process
// group pgid, as /proc shows them. A process whose environment cannot be
// read (another user's, one that exited meanwhile) is left out.
func groupEnvirons(pgid int) ([][]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var envs [][]string
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		data, err := os.ReadFile("/proc/" + ent.Name() + "/environ")
		if err != nil {
			continue
		}
		envs = append(envs, strings.Split(string(data), "\x00"))
	}
	return envs, nil
}
