//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

func detect(bool) Support {
	var s Support
	if runtime.GOOS == "darwin" {
		if p, err := exec.LookPath(sandboxExec); err == nil {
			s.SandboxExec = p
		}
	}
	return s
}
