package sandbox

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/hint"
)

func TestResolve(t *testing.T) {
	full := Support{LandlockABI: 7, Bwrap: "/usr/bin/bwrap", NetNamespace: true}
	noNetns := Support{LandlockABI: 7, Bwrap: "/usr/bin/bwrap"}
	oldKernel := Support{LandlockABI: 2, Bwrap: "/usr/bin/bwrap"}
	landlockOnly := Support{LandlockABI: 4}
	mac := Support{SandboxExec: "/usr/bin/sandbox-exec"}
	none := Support{}
	cases := []struct {
		name    string
		s       Support
		mode    Mode
		network Network
		want    Mode
		warns   bool
		errs    string
	}{
		{"off is off", full, ModeOff, NetworkAllow, ModeOff, false, ""},
		{"auto picks landlock", full, ModeAuto, NetworkAllow, ModeLandlock, false, ""},
		{"auto with deny picks landlock with a namespace", full, ModeAuto, NetworkDeny, ModeLandlock, false, ""},
		{"auto with deny and no namespace picks bwrap", noNetns, ModeAuto, NetworkDeny, ModeBwrap, false, ""},
		{"auto on an old kernel picks bwrap", oldKernel, ModeAuto, NetworkAllow, ModeBwrap, false, ""},
		{"auto on a mac picks seatbelt", mac, ModeAuto, NetworkDeny, ModeSeatbelt, false, ""},
		{"auto with nothing is off with a warning", none, ModeAuto, NetworkAllow, ModeOff, true, ""},
		{"auto with deny and no way to deny is off with a warning", landlockOnly, ModeAuto, NetworkDeny, ModeOff, true, ""},
		{"landlock", landlockOnly, ModeLandlock, NetworkAllow, ModeLandlock, false, ""},
		{"landlock too old", oldKernel, ModeLandlock, NetworkAllow, "", false, "landlock"},
		{"landlock deny without a namespace", noNetns, ModeLandlock, NetworkDeny, "", false, "network namespace"},
		{"bwrap", full, ModeBwrap, NetworkDeny, ModeBwrap, false, ""},
		{"bwrap missing", landlockOnly, ModeBwrap, NetworkAllow, "", false, "bubblewrap"},
		{"seatbelt missing", full, ModeSeatbelt, NetworkAllow, "", false, "sandbox-exec"},
		{"unknown mode", full, "docker", NetworkAllow, "", false, "not a mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, warning, err := c.s.Resolve(c.mode, c.network)
			if c.errs != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.errs)
				assert.NotEmpty(t, hint.Of(err), "an unavailable mode says how to fix it")
				assert.Equal(t, exitcode.Fatal, hint.ExitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			if c.warns {
				assert.Contains(t, warning, "unconfined")
			} else {
				assert.Empty(t, warning)
			}
		})
	}
}

func TestResolveSaysWhatTheMachineLacks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the wording names Linux's mechanisms")
	}
	_, warning, _ := Support{}.Resolve(ModeAuto, NetworkAllow)
	assert.Equal(t, "no sandbox on this machine (this kernel has no Landlock, no bubblewrap): the agent runs unconfined; install bubblewrap (apt-get install bubblewrap, or dnf install bubblewrap), or set sandbox.mode: off to say so", warning)
	_, _, err := Support{LandlockABI: 2}.Resolve(ModeLandlock, NetworkAllow)
	assert.EqualError(t, err, "sandbox.mode: landlock, but this kernel's Landlock is ABI 2, ralph needs 3 (Linux 6.2)")
	assert.Contains(t, hint.Of(err), "Linux 6.2 or later")
}

func TestReport(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the report names Linux's mechanisms")
	}
	assert.Equal(t, []string{
		"landlock: ABI 7, available",
		"network namespace: available (network: deny under landlock)",
		"bwrap: not installed (apt-get install bubblewrap, or dnf install bubblewrap)",
		"auto: landlock; with network: deny, landlock",
	}, Support{LandlockABI: 7, NetNamespace: true}.Report())
	assert.Equal(t, []string{
		"landlock: ABI 2, too old: ralph needs 3 (Linux 6.2)",
		"network namespace: not probed (only Landlock needs it; bwrap makes its own)",
		"bwrap: /usr/bin/bwrap",
		"auto: bwrap; with network: deny, bwrap",
	}, Support{LandlockABI: 2, Bwrap: "/usr/bin/bwrap"}.Report())
}
