package procgroup

import (
	"os"
	"strconv"
	"strings"
)

// StartTime is when process pid started (the starttime of
// /proc/<pid>/stat, in clock ticks since boot): with the pid, it tells a
// process from a later one that was given the same pid. "" when there is
// no such process, or where it cannot be read.
func StartTime(pid int) string {
	_, start := procStat(pid)
	return start
}

// procStat is process pid's state ("R", "S", "Z" for a zombie, …) and
// StartTime, from /proc/<pid>/stat; "" for both when there is no such
// process.
func procStat(pid int) (state, start string) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", ""
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields are counted after its last ')', from the third (state).
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", ""
	}
	fields := strings.Fields(s[i+1:])
	const startTime = 22 - 3
	if len(fields) <= startTime {
		return "", ""
	}
	return fields[0], fields[startTime]
}
