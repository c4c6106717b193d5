package procgroup

import (
	"os/exec"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prGetChildSubreaper is PR_GET_CHILD_SUBREAPER from <linux/prctl.h>.
const prGetChildSubreaper = 37

func TestStartMakesTheProcessASubreaper(t *testing.T) {
	g, err := Start(exec.Command("/bin/sh", "-c", "exit 0"), testGrace)
	require.NoError(t, err)
	_, err = g.Wait(t.Context())
	require.NoError(t, err)

	var on int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&on)), 0)
	require.Zero(t, errno)
	assert.Equal(t, int32(1), on)
}
