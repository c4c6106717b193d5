package engine

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// groupEnvirons returns the environment of each process in the process
// group pgid that has not exited, as /proc shows them: none when the
// group is gone or only exited processes not yet reaped (zombies) are
// left of it. The environment of a process that cannot be read (another
// user's) is empty.
func groupEnvirons(pgid int) ([][]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var envs [][]string
	for _, ent := range entries {
		if _, err := strconv.Atoi(ent.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if st, ok := parseStat(data); !ok || st.pgrp != pgid || st.state == "Z" {
			continue
		}
		data, _ = os.ReadFile("/proc/" + ent.Name() + "/environ")
		envs = append(envs, strings.Split(string(data), "\x00"))
	}
	return envs, nil
}

// processStart is when process pid started, in clock ticks since boot
// (/proc/<pid>/stat): with the pid, it names one process for as long as
// the machine runs. One that has exited but is not yet reaped still has
// it.
func processStart(pid int) (string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	st, ok := parseStat(data)
	if !ok {
		return "", errors.New("/proc/" + strconv.Itoa(pid) + "/stat: unexpected format")
	}
	return st.start, nil
}

// procStat is what ralph reads of /proc/<pid>/stat.
type procStat struct {
	state string // "Z" for a zombie
	pgrp  int
	start string
}

// parseStat reads "pid (comm) state ppid pgrp … starttime …", where comm
// may hold anything, spaces and parentheses included, and starttime is
// the 22nd field.
func parseStat(stat []byte) (procStat, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(stat[i+1:])) // from the 3rd field on
	if len(f) < 20 {
		return procStat{}, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return procStat{state: f[0], pgrp: pgrp, start: f[19]}, err == nil
}
