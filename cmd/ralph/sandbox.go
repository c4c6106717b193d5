package main

import (
	"github.com/ralph-loop/ralph/internal/sandbox"
	"github.com/ralph-loop/ralph/view"
)

// sandboxSupport is what ralph doctor says of this machine's sandboxes.
func sandboxSupport() view.SandboxSupport {
	s := sandbox.Detect()
	auto, warning, err := s.Resolve(sandbox.ModeAuto, sandbox.NetworkAllow)
	if err != nil {
		warning = err.Error()
	}
	return view.SandboxSupport{Mechanisms: s.Report(), Auto: string(auto), Warning: warning}
}
