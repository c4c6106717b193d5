package cluster

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/procgroup"
)

// leftover starts a process as a dead worker's loop would have left it:
// carrying the loop's mark, reparented away from its worker.
func leftover(t *testing.T, mark procgroup.Mark) *os.Process {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.Env = append(os.Environ(), procgroup.MarkEnv+"="+string(mark))
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd.Process
}

func writeRecord(t *testing.T, dir, id string, rec loopRecord) {
	t.Helper()
	jobs := filepath.Join(jobsDir(dir), id)
	require.NoError(t, os.MkdirAll(jobs, 0o755))
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(jobs, loopRecordFile), data, 0o600))
}

// alive reports whether p runs (and is not a zombie waiting for its Wait).
func alive(p *os.Process) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid), "stat"))
	return err == nil && !strings.Contains(string(data), ") Z ")
}

// needProc skips a test where processes cannot be found by their mark.
func needProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: processes cannot be found by their mark here")
	}
}

// What a task's loop left running when its worker process died is stopped
// before the task runs again in the same directory; the record goes.
func TestStopLeftoversOfADeadWorker(t *testing.T) {
	needProc(t)
	dir := t.TempDir()
	var logged []string
	w := &Worker{opts: WorkerOptions{Checkouts: Checkouts{Dir: dir}}, log: logTo(func(s string) { logged = append(logged, s) })}
	mark := procgroup.NewMark()
	p := leftover(t, mark)
	other := leftover(t, procgroup.NewMark())
	// A worker pid that no process has: the worker is gone.
	writeRecord(t, dir, "t1", loopRecord{Mark: mark, WorkerPID: 1 << 30, WorkerStart: "1"})

	w.stopLeftovers("t1")
	assert.Eventually(t, func() bool { return !alive(p) }, 10*time.Second, 10*time.Millisecond)
	assert.True(t, alive(other), "another loop's process lives on")
	assert.Contains(t, strings.Join(logged, "\n"), "task t1: stopped 1 process(es) that its loop left running here when worker process 1073741824 died")
	assert.NoFileExists(t, filepath.Join(jobsDir(dir), "t1", loopRecordFile), "the record is done with")
}

// A loop whose worker process still runs is that worker's to look after.
func TestStopLeftoversLeavesALiveWorkersLoop(t *testing.T) {
	dir := t.TempDir()
	w := &Worker{opts: WorkerOptions{Checkouts: Checkouts{Dir: dir}}, log: logTo(func(string) {})}
	mark := procgroup.NewMark()
	p := leftover(t, mark)
	writeRecord(t, dir, "t1", loopRecord{Mark: mark, WorkerPID: os.Getpid(), WorkerStart: procgroup.StartTime(os.Getpid())})
	w.stopLeftovers("t1")
	require.NoError(t, p.Signal(syscall.Signal(0)))
	assert.True(t, alive(p))
}

// A worker that starts stops what the loops of every task recorded in its
// directory left running when their worker died, the tasks it will not
// run included; a live worker's loop is left to it, and a record that
// cannot be read is said.
func TestWorkerStopsLeftoversWhenItStarts(t *testing.T) {
	needProc(t)
	dir := t.TempDir()
	var mu sync.Mutex
	var logged []string
	w := &Worker{opts: WorkerOptions{Checkouts: Checkouts{Dir: dir}}, log: logTo(func(s string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, s)
	})}
	dead := loopRecord{WorkerPID: 1 << 30, WorkerStart: "1"}
	var left []*os.Process
	for _, id := range []string{"t1", "t2"} {
		rec := dead
		rec.Mark = procgroup.NewMark()
		left = append(left, leftover(t, rec.Mark), leftover(t, rec.Mark))
		writeRecord(t, dir, id, rec)
	}
	live := loopRecord{Mark: procgroup.NewMark(), WorkerPID: os.Getpid(), WorkerStart: procgroup.StartTime(os.Getpid())}
	running := leftover(t, live.Mark)
	writeRecord(t, dir, "t3", live)
	require.NoError(t, os.MkdirAll(filepath.Join(jobsDir(dir), "t4"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(jobsDir(dir), "t4", loopRecordFile), []byte("{"), 0o600))

	w.stopAllLeftovers()
	for _, p := range left {
		assert.Eventually(t, func() bool { return !alive(p) }, 10*time.Second, 10*time.Millisecond, "process %d", p.Pid)
	}
	assert.True(t, alive(running), "the live worker's loop is its own")
	assert.NoFileExists(t, filepath.Join(jobsDir(dir), "t1", loopRecordFile))
	assert.NoFileExists(t, filepath.Join(jobsDir(dir), "t2", loopRecordFile))
	assert.FileExists(t, filepath.Join(jobsDir(dir), "t3", loopRecordFile))
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(logged, "\n")
	assert.Contains(t, all, "task t1: stopped 2 process(es)")
	assert.Contains(t, all, "task t2: stopped 2 process(es)")
	assert.Contains(t, all, "task t4: the record of its last loop here")
	assert.Contains(t, all, "cannot be read")
}
