package fileholders

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary play a process that keeps a file open.
func TestMain(m *testing.M) {
	if path := os.Getenv("FILEHOLDERS_HOLD"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			os.Exit(2)
		}
		defer f.Close()
		if os.Getenv("FILEHOLDERS_LOCK") != "" {
			// A second descriptor of the file, locked as ralph locks its
			// workspace (flock where there is one).
			if ok, err := flock.New(path).TryLock(); !ok || err != nil {
				os.Exit(3)
			}
		}
		if _, err := os.Stdout.WriteString("open\n"); err != nil {
			os.Exit(4)
		}
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // hold until told
		return
	}
	os.Exit(m.Run())
}

func TestFindNamesTheProcessThatHasTheFileOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	path := filepath.Join(t.TempDir(), "held")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.WriteFile(other, nil, 0o644))

	cmd, stdin := holdOpen(t, path, false)

	procs, err := Find(path)
	require.NoError(t, err)
	require.Len(t, procs, 1)
	assert.Equal(t, cmd.Process.Pid, procs[0].PID)
	assert.Contains(t, procs[0].Command, filepath.Base(os.Args[0]))
	assert.False(t, procs[0].Locks, "open, not locked")

	none, err := Find(other)
	require.NoError(t, err)
	assert.Empty(t, none, "nobody has the other file open")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	after, err := Find(path)
	require.NoError(t, err)
	assert.Empty(t, after, "the holder closed it by exiting")
}

func TestFindTellsLockersFromReaders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	path := filepath.Join(t.TempDir(), "lock")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	reader, readerIn := holdOpen(t, path, false)
	locker, lockerIn := holdOpen(t, path, true)
	defer func() { _ = readerIn.Close(); _ = lockerIn.Close(); _ = reader.Wait(); _ = locker.Wait() }()

	procs, err := Find(path)
	require.NoError(t, err)
	require.Len(t, procs, 2)
	lockers := Lockers(procs)
	require.Len(t, lockers, 1)
	assert.Equal(t, locker.Process.Pid, lockers[0].PID)
}

// lsof, which macOS and the BSDs use, gives the answer /proc gives.
func TestLsofAgreesWithProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc to compare with")
	}
	if _, err := exec.LookPath("lsof"); err != nil {
		t.Skip("no lsof here")
	}
	path := filepath.Join(t.TempDir(), "lock")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	none, err := findWithLsof(path)
	require.NoError(t, err)
	assert.Empty(t, none, "nobody has it open yet")

	reader, readerIn := holdOpen(t, path, false)
	locker, lockerIn := holdOpen(t, path, true)
	defer func() { _ = readerIn.Close(); _ = lockerIn.Close(); _ = reader.Wait(); _ = locker.Wait() }()

	byProc, err := Find(path)
	require.NoError(t, err)
	byLsof, err := findWithLsof(path)
	require.NoError(t, err)
	require.Len(t, byLsof, 2)
	assert.ElementsMatch(t, pids(byProc), pids(byLsof))
	lockers := Lockers(byLsof)
	require.Len(t, lockers, 1)
	assert.Equal(t, locker.Process.Pid, lockers[0].PID)
	assert.Contains(t, filepath.Base(os.Args[0]), lockers[0].Command, "lsof gives the command's name")
}

func TestParseLsof(t *testing.T) {
	out := "p10\ncralph\nf3\nlW\nf4\nl \np11\ncsleep\nf3\nl \np12\ncself\nf5\nlW\npbad\ncx\n"
	assert.Equal(t, []Process{{PID: 10, Command: "ralph", Locks: true}, {PID: 11, Command: "sleep"}}, parseLsof([]byte(out), 12))
}

func pids(procs []Process) []int {
	var out []int
	for _, p := range procs {
		out = append(out, p.PID)
	}
	return out
}

// holdOpen starts a process that opens path (and locks it, if lock) and
// keeps it so until its stdin closes; it returns once the file is open.
func holdOpen(t *testing.T, path string, lock bool) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "FILEHOLDERS_HOLD="+path)
	if lock {
		cmd.Env = append(cmd.Env, "FILEHOLDERS_LOCK=1")
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "open\n", line)
	return cmd, stdin
}

func TestFindSkipsTheCaller(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	path := filepath.Join(t.TempDir(), "mine")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	procs, err := Find(path)
	require.NoError(t, err)
	assert.Empty(t, procs)
}

func TestDescribe(t *testing.T) {
	assert.Equal(t, "pid 1 (init), pid 42", Describe([]Process{{PID: 1, Command: "init"}, {PID: 42}}))
}
