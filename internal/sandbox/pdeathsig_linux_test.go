package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The main goroutine stays on the thread exec started the test binary on,
// the only one that carries a parent-death signal: parentDeathSignal reads
// the calling thread's.
func init() { runtime.LockOSThread() }

// parentDeathSignal is the calling thread's PR_GET_PDEATHSIG.
func parentDeathSignal() (int, error) {
	var sig int32
	err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0)
	return int(sig), err
}
