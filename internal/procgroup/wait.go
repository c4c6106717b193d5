package procgroup

import (
	"context"
	"os/exec"
)

// waitOrStop is every system's Group.Wait: it waits for cmd to exit and
// returns its error; if ctx ends first, stop is called with a channel that
// closes once cmd has exited, and stopped says so.
func waitOrStop(ctx context.Context, cmd *exec.Cmd, stop func(leaderDone <-chan struct{})) (stopped bool, err error) {
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return false, waitErr
	case <-ctx.Done():
	}
	stop(done)
	<-done
	return true, waitErr
}
