package procgroup

import "os/exec"

// RunDetached runs the command newCmd makes, detached, to its end. A
// signal sent to ralph's whole process group (a terminal's Ctrl-C) still
// reaches a command in the instant between its fork and its move to a
// group of its own, before it has run anything of its own; a command that
// died of such a signal is made and run again, once.
func RunDetached(newCmd func() *exec.Cmd) error {
	cmd := newCmd()
	Detach(cmd)
	err := cmd.Run()
	if !diedOfTerminalSignal(err) {
		return err
	}
	cmd = newCmd()
	Detach(cmd)
	return cmd.Run()
}
