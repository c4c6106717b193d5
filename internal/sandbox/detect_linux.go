package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probeArg and probeEnv mark ralph re-executed to find out whether an agent
// can be given a network namespace of its own.
const (
	probeArg = "netns-probe"
	probeEnv = "RALPH_SANDBOX_NETNS_PROBE"
)

// The probe is answered in init, not only in Launch, because Detect may be
// called by any program that links this package (every test binary of
// ralph's among them), and only ralph's main hands its arguments to
// Launch: a test binary re-executed for the probe would otherwise run its
// tests. The environment variable keeps a stray argument from triggering it.
func init() {
	if len(os.Args) > 2 && os.Args[1] == LauncherArg && os.Args[2] == probeArg && os.Getenv(probeEnv) == "1" {
		answerProbe()
	}
}

func answerProbe() {
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// netnsProbe is the probe's one answer per process; started says a
// process was started for it, and cached that the user's cache gave it.
type netnsProbe struct {
	once    sync.Once
	started bool
	cached  bool
	ok      bool
}

// How detect learns whether an agent can have a network namespace.
type netnsAsk int

const (
	netnsSkip   netnsAsk = iota // not at all: the run keeps the network
	netnsCached                 // from the user's cache, else a probe
	netnsProbed                 // from a probe, which refreshes the cache
)

var netns = new(netnsProbe)

func detect(ask netnsAsk) Support {
	var s Support
	if v, err := llsys.LandlockGetABIVersion(); err == nil {
		s.LandlockABI = v
	}
	if p, err := exec.LookPath("bwrap"); err == nil {
		s.Bwrap = p
	}
	if ask != netnsSkip && s.LandlockABI >= minLandlockABI {
		s.NetNamespace = probeNetNamespace(ask == netnsCached)
	}
	return s
}

// probeNetNamespace starts this program once per process, in the
// namespaces an agent with network: deny gets, and has it bring loopback
// up there: a user namespace can be refused outright (a sysctl) or granted
// without the capabilities to configure its network (Ubuntu's AppArmor
// rule), and only trying tells the two from success. With trustCache a
// success an earlier run recorded (netnsEntry) answers instead.
func probeNetNamespace(trustCache bool) bool {
	netns.once.Do(func() {
		entry := netnsCacheEntry()
		if trustCache && entry.holds() {
			netns.cached, netns.ok = true, true
			return
		}
		exe, err := os.Executable()
		if err != nil {
			return
		}
		cmd := exec.Command(exe, LauncherArg, probeArg)
		cmd.Env = []string{probeEnv + "=1"}
		cmd.SysProcAttr = withNetNamespace(nil)
		netns.started = true
		netns.ok = cmd.Run() == nil
		entry.record(netns.ok)
	})
	return netns.ok
}

// withNetNamespace adds to attr (nil for a new one) a network namespace of
// the process's own, in a user namespace that maps the caller's ids onto
// themselves when ralph is not root (a network namespace needs
// CAP_SYS_ADMIN, which only a user namespace gives an unprivileged user).
func withNetNamespace(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return attr
}

// loopbackUp brings up lo in a new network namespace, where it starts
// down, so that an agent's local servers and ralph's tools on 127.0.0.1
// keep working with network: deny.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring loopback up: socket: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring loopback up: read its flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	return nil
}
