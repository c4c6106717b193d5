package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Group is, on Windows, a job object that holds the started command and
// everything it starts, killed whole when ralph stops it or ralph's last
// handle to it closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): so an agent
// dies with the ralph that started it, however ralph ends. The command
// also leads a console process group of its own (CREATE_NEW_PROCESS_GROUP),
// which the terminal's Ctrl-C, meant for ralph, does not reach, and to
// which ralph sends CTRL_BREAK_EVENT as its gentle stop.
type Group struct {
	cmd  *exec.Cmd
	mark Mark
	job  *winJob
	stop jobStop
}

// Start starts cmd in a job object of its own, as the root of a new
// console process group, keeping any other SysProcAttr settings. grace is
// the time the group gets between CTRL_BREAK_EVENT and termination. cmd's
// environment gets a new Mark, as on Unix.
//
// cmd starts suspended and is resumed once it is in the job, so nothing
// it starts escapes the job; should the job refuse it (a parent job that
// forbids nesting, before Windows 8), it is killed before it has run
// anything, and Start fails.
func Start(cmd *exec.Cmd, grace time.Duration) (*Group, error) {
	return StartMarked(cmd, grace, NewMark())
}

// StartMarked is Start with the mark chosen by the caller.
func StartMarked(cmd *exec.Cmd, grace time.Duration, m Mark) (*Group, error) {
	m.tag(cmd)
	j, err := newJob()
	if err != nil {
		return nil, fmt.Errorf("create a job object: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		j.close()
		return nil, err
	}
	pid := uint32(cmd.Process.Pid)
	j.pgid = pid
	if err := j.adopt(pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		j.close()
		return nil, fmt.Errorf("start %s in a job object: %w", cmd.Path, err)
	}
	return &Group{cmd: cmd, mark: m, job: j, stop: jobStop{job: j, grace: grace, bound: reapBound}}, nil
}

// Mark is the mark the command carries.
func (g *Group) Mark() Mark { return g.mark }

// Stop stops the group while its leader may still be running:
// CTRL_BREAK_EVENT to its console process group, then termination of the
// whole job when the grace has passed or force closes, unless leaderDone
// closes first. A group that cannot be sent CTRL_BREAK_EVENT (ralph has
// no console) is terminated at once.
func (g *Group) Stop(leaderDone, force <-chan struct{}) {
	select {
	case <-leaderDone:
		return // the root is gone: a CTRL_BREAK_EVENT would have no group to go to
	default:
	}
	g.stop.stop(leaderDone, force)
}

// Wait waits for the leader to exit and returns its error; if ctx ends
// first, the group is stopped as Stop does, and stopped says so.
func (g *Group) Wait(ctx context.Context) (stopped bool, err error) {
	return waitOrStop(ctx, g.cmd, func(done <-chan struct{}) { g.Stop(done, nil) })
}

// EnsureGone runs after the leader has exited and been waited for: what is
// left in the job is terminated (once the grace since CTRL_BREAK_EVENT has
// passed, if one was sent), and EnsureGone returns nil once the job is
// empty, or an error if it is not reapBound after. The job's handle is
// closed then, which kills whatever is still in it.
func (g *Group) EnsureGone(force <-chan struct{}) error {
	defer g.job.close()
	return g.stop.ensureGone(force)
}

// StopMarked finds nothing on Windows: another process's environment
// cannot be read there, and there is no need to, since the processes of a
// group whose ralph died were killed with its job.
func StopMarked(Mark, time.Duration) (int, error) { return 0, nil }

// winJob is a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE.
type winJob struct {
	h    windows.Handle
	pgid uint32 // the console process group of its first process
}

func newJob() (*winJob, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(h)
		return nil, err
	}
	return &winJob{h: h}, nil
}

// adopt puts process pid, started suspended, in the job, and resumes it.
// ralph holds the process's handle (exec.Cmd has not waited for it), so
// its pid names no other process.
func (j *winJob) adopt(pid uint32) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer func() { _ = windows.CloseHandle(p) }()
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("assign process %d: %w", pid, err)
	}
	return resumeProcess(pid)
}

// resumeProcess resumes the threads of process pid, started suspended:
// exec.Cmd closes the handle of its main thread, so the thread is found
// among the system's. A process started suspended has that one thread.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer func() { _ = windows.CloseHandle(snap) }()
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d of process %d: %w", entry.ThreadID, pid, err)
		}
		_, err = windows.ResumeThread(t)
		_ = windows.CloseHandle(t)
		if err != nil {
			return fmt.Errorf("resume thread %d of process %d: %w", entry.ThreadID, pid, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("list threads: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

func (j *winJob) interrupt() error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, j.pgid)
}

func (j *winJob) terminate() error { return windows.TerminateJobObject(j.h, 1) }

// basicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not declare.
type basicAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

func (j *winJob) active() (int, error) {
	var info basicAccounting
	err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return int(info.ActiveProcesses), err
}

// close closes the job's handle, which kills what is still in it; once.
func (j *winJob) close() {
	if j.h != 0 {
		_ = windows.CloseHandle(j.h)
		j.h = 0
	}
}
