package procgroup

import "golang.org/x/sys/windows"

// Interrupt asks process pid, a ralph started as the root of a console
// process group of its own ([Start], [Detach]), to stop as its user
// would: CTRL_BREAK_EVENT to that group, which Go delivers to ralph as
// os.Interrupt. Only a process that shares this one's console receives it.
func Interrupt(pid int) error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
}
