package sandbox

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/hint"
)

// minLandlockABI is the oldest Landlock ralph uses: below 3 (Linux 6.2)
// truncate(2) is not handled, and below 2 a rename across directories is
// refused, which breaks git and every editor's atomic save.
const minLandlockABI = 3

// The fixes an unavailable mechanism's error and warning give.
const (
	bwrapInstall   = "apt-get install bubblewrap, or dnf install bubblewrap"
	fixBwrap       = "install bubblewrap (" + bwrapInstall + ")"
	fixKernel      = "run Linux 6.2 or later with landlock among its LSMs (lsm= on the kernel's command line)"
	fixUserNS      = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)"
	fixAutoOrOff   = "or set sandbox.mode: auto (the strongest this machine has) or off"
	unconfinedNote = "the agent runs unconfined"
)

func (s Support) landlockOK(network Network) bool {
	return s.LandlockABI >= minLandlockABI && (network != NetworkDeny || s.NetNamespace)
}

func (s Support) resolve(mode Mode, network Network) (Mode, string, error) {
	switch mode {
	case ModeOff, "":
		return ModeOff, "", nil
	case ModeAuto:
		return s.auto(network)
	case ModeLandlock:
		if s.landlockOK(network) {
			return ModeLandlock, "", nil
		}
		return "", "", s.landlockError(network)
	case ModeBwrap:
		if s.Bwrap != "" {
			return ModeBwrap, "", nil
		}
		return "", "", unavailable("sandbox.mode: bwrap, but bubblewrap (bwrap) is not on PATH", fixBwrap+", "+fixAutoOrOff)
	case ModeSeatbelt:
		if s.SandboxExec != "" {
			return ModeSeatbelt, "", nil
		}
		return "", "", unavailable("sandbox.mode: seatbelt, but this machine has no sandbox-exec (it is macOS's)", "set sandbox.mode: auto, or off")
	}
	return "", "", unavailable(fmt.Sprintf("sandbox.mode: %q is not a mode", mode), "use one of off, auto, landlock, bwrap, seatbelt")
}

// auto is the strongest mechanism the machine has, or off with the one
// warning that says what it lacks and how to get it.
func (s Support) auto(network Network) (Mode, string, error) {
	switch {
	case s.landlockOK(network):
		return ModeLandlock, "", nil
	case s.Bwrap != "":
		return ModeBwrap, "", nil
	case s.SandboxExec != "":
		return ModeSeatbelt, "", nil
	}
	switch {
	case runtime.GOOS == "windows":
		return ModeOff, "no sandbox on Windows: " + unconfinedNote + " (set sandbox.mode: off to say so)", nil
	case runtime.GOOS != "linux":
		return ModeOff, "no sandbox on this system (" + runtime.GOOS + "): " + unconfinedNote + " (set sandbox.mode: off to say so)", nil
	case s.LandlockABI >= minLandlockABI:
		return ModeOff, "no sandbox can deny the network here (no network namespace for Landlock, no bubblewrap): " + unconfinedNote + "; " + fixBwrap + ", " + fixUserNS + ", or set sandbox.network: allow", nil
	}
	return ModeOff, fmt.Sprintf("no sandbox on this machine (%s, no bubblewrap): %s; %s, or set sandbox.mode: off to say so", s.landlockState(), unconfinedNote, fixBwrap), nil
}

func (s Support) landlockError(network Network) error {
	switch {
	case runtime.GOOS != "linux":
		return unavailable("sandbox.mode: landlock, but Landlock is Linux's", "set sandbox.mode: auto, or off")
	case s.LandlockABI < minLandlockABI:
		return unavailable("sandbox.mode: landlock, but "+s.landlockState(), fixKernel+"; or "+fixBwrap+" and set sandbox.mode: bwrap, "+fixAutoOrOff)
	}
	return unavailable("sandbox.mode: landlock with sandbox.network: deny, but this machine cannot give the agent a network namespace of its own",
		fixUserNS+"; or set sandbox.mode: bwrap, or sandbox.network: allow")
}

// landlockState says what the kernel offers, for errors, warnings and
// ralph doctor.
func (s Support) landlockState() string {
	switch {
	case runtime.GOOS != "linux":
		return "Landlock is Linux's"
	case s.LandlockABI == 0:
		return "this kernel has no Landlock"
	case s.LandlockABI < minLandlockABI:
		return fmt.Sprintf("this kernel's Landlock is ABI %d, ralph needs %d (Linux 6.2)", s.LandlockABI, minLandlockABI)
	}
	return fmt.Sprintf("Landlock ABI %d", s.LandlockABI)
}

func unavailable(msg, fix string) error {
	return &hint.Error{Err: errors.New(msg), Fix: fix, Code: exitcode.Fatal}
}

func (s Support) report() []string {
	var lines []string
	if runtime.GOOS == "linux" {
		lines = append(lines, s.landlockLine(), s.netnsLine(), s.bwrapLine())
	}
	if runtime.GOOS == "darwin" {
		lines = append(lines, s.seatbeltLine())
	}
	mode, warning, _ := s.Resolve(ModeAuto, NetworkAllow)
	deny, denyWarning, _ := s.Resolve(ModeAuto, NetworkDeny)
	switch {
	case mode == ModeOff:
		lines = append(lines, "auto: off: "+warning)
	case deny == ModeOff:
		lines = append(lines, fmt.Sprintf("auto: %s; with network: deny, off: %s", mode, denyWarning))
	default:
		lines = append(lines, fmt.Sprintf("auto: %s; with network: deny, %s", mode, deny))
	}
	return lines
}

func (s Support) landlockLine() string {
	switch {
	case s.LandlockABI == 0:
		return "landlock: not available (" + fixKernel + ")"
	case s.LandlockABI < minLandlockABI:
		return fmt.Sprintf("landlock: ABI %d, too old: ralph needs %d (Linux 6.2)", s.LandlockABI, minLandlockABI)
	}
	return fmt.Sprintf("landlock: ABI %d, available", s.LandlockABI)
}

func (s Support) netnsLine() string {
	switch {
	case s.LandlockABI < minLandlockABI:
		return "network namespace: not probed (only Landlock needs it; bwrap makes its own)"
	case s.NetNamespace:
		return "network namespace: available (network: deny under landlock)"
	}
	return "network namespace: not available, so network: deny needs bwrap (" + fixUserNS + ")"
}

func (s Support) bwrapLine() string {
	if s.Bwrap == "" {
		return "bwrap: not installed (" + bwrapInstall + ")"
	}
	return "bwrap: " + s.Bwrap
}

func (s Support) seatbeltLine() string {
	if s.SandboxExec == "" {
		return "seatbelt: sandbox-exec not found"
	}
	return "seatbelt: " + s.SandboxExec + " (its profile is untested on a real Mac)"
}
