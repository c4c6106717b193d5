//go:build unix

package interrupt

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFirstSignalCancelsSecondForces(t *testing.T) {
	h := Listen()
	defer h.Stop()
	told := make(chan struct{})
	h.OnInterrupt(func() { close(told) })

	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
	<-h.Context().Done()
	<-told
	select {
	case <-h.Force():
		t.Fatal("one signal forced the stop")
	default:
	}

	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	<-h.Force()
}
