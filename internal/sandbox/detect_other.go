//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// netnsAsk is Linux's; elsewhere there is no namespace to ask about.
type netnsAsk int

const (
	netnsSkip netnsAsk = iota
	netnsCached
	netnsProbed
)

func detect(netnsAsk) Support {
	var s Support
	if runtime.GOOS == "darwin" {
		if p, err := exec.LookPath(sandboxExec); err == nil {
			s.SandboxExec = p
		}
	}
	return s
}
