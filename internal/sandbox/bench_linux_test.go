package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkConfine is the sandbox's cost per iteration: building the rules
// and starting `true` confined (under Landlock the launcher's re-exec, its
// walk of the denied paths' directories and the restriction), against
// starting it unconfined.
func BenchmarkConfine(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true on PATH")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	s := Detect()
	for _, mode := range []Mode{ModeOff, ModeLandlock, ModeBwrap} {
		if (mode == ModeLandlock && s.LandlockABI < minLandlockABI) || (mode == ModeBwrap && s.Bwrap == "") {
			continue
		}
		b.Run(string(mode), func(b *testing.B) {
			a := Agent{Mode: mode, Workspace: b.TempDir(), Home: home, Launcher: exe}
			for b.Loop() {
				cmd := exec.Command(truePath)
				cleanup, err := a.Confine(cmd)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cleanup()
			}
		})
	}
}
