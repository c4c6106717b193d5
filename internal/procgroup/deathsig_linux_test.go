package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary play a ralph that starts a group and is
// then killed outright.
func TestMain(m *testing.M) {
	if os.Getenv("PROCGROUP_TEST_PARENT") != "" {
		cmd := exec.Command("/bin/sh", "-c", "exec sleep 600")
		if _, err := Start(cmd, testGrace); err != nil {
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		select {} // until killed
	}
	os.Exit(m.Run())
}

func TestTheLeaderDiesWithRalph(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run", "^$")
	parent.Env = append(os.Environ(), "PROCGROUP_TEST_PARENT=1")
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	leader, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(leader, syscall.SIGKILL) })

	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	_ = parent.Wait()

	// The kernel delivers the signal as the parent exits; the leader is
	// gone, or a zombie waiting for init, once it has been handled.
	deadline := time.Now().Add(time.Minute)
	for !deadOrZombie(leader) {
		require.True(t, time.Now().Before(deadline), "the leader %d outlived its parent by a minute", leader)
		time.Sleep(10 * time.Millisecond)
	}
}

func deadOrZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}
