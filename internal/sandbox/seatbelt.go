package sandbox

import (
	"fmt"
	"os/exec"
	"strings"
)

// sandboxExec is macOS's Seatbelt front end.
const sandboxExec = "/usr/bin/sandbox-exec"

// confineSeatbelt makes cmd run under sandbox-exec with r's profile.
func confineSeatbelt(r rules, cmd *exec.Cmd) error {
	args := append([]string{sandboxExec, "-p", seatbeltProfile(r), "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sandboxExec, args
	return nil
}

// seatbeltBase is what any program needs, allowed on a profile that denies
// by default: starting programs, signals within the sandbox, reading
// system settings and talking to system services (Mach lookups: DNS, the
// keychain's absence is handled by denied reads), shared memory, and
// terminals. Seatbelt applies the last rule that matches, so the reads
// denied come after "read everything" and the writable paths after both.
const seatbeltBase = `(version 1)
(deny default)
(allow process-exec process-fork)
(allow process-info* (target same-sandbox))
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow user-preference-read)
(allow ipc-posix-shm ipc-posix-sem ipc-sysv-shm ipc-sysv-sem)
(allow pseudo-tty)
(allow file-ioctl)
(allow file-read*)
`

// seatbeltDevices are writable whatever the rules say: the terminals
// macOS names /dev/ttysNNN.
const seatbeltDevices = `(allow file-read* file-write* (regex #"^/dev/ttys[0-9]+$"))
`

// seatbeltProfile is r as a Seatbelt profile (SBPL). It cannot be run
// here: it is checked against golden files, and untested on a real Mac.
func seatbeltProfile(r rules) string {
	var b strings.Builder
	b.WriteString(seatbeltBase)
	if len(r.Deny) > 0 {
		b.WriteString("(deny file-read*")
		for _, p := range r.Deny {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbString(p))
		}
		b.WriteString(")\n")
	}
	b.WriteString("(allow file-read* file-write*")
	for _, p := range r.WriteDirs {
		fmt.Fprintf(&b, "\n  (subpath %s)", sbString(p))
	}
	for _, p := range append(append([]string(nil), r.WriteFiles...), r.Devices...) {
		fmt.Fprintf(&b, "\n  (literal %s)", sbString(p))
	}
	b.WriteString(")\n")
	if len(r.ReadOnly) > 0 {
		b.WriteString("(deny file-write*")
		for _, p := range r.ReadOnly {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbString(p))
		}
		b.WriteString(")\n")
	}
	b.WriteString(seatbeltDevices)
	if r.NetDeny {
		b.WriteString(`(allow network* (remote unix-socket))
(allow network-outbound (remote ip "localhost:*"))
(allow network-inbound network-bind (local ip "localhost:*"))
`)
	} else {
		b.WriteString("(allow network*)\n")
	}
	return b.String()
}

// sbString quotes s as an SBPL string.
func sbString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
