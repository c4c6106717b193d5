package sandbox

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// dialArg makes the test binary, run inside a sandbox by the tests, a tiny
// network client: "dial ADDR" connects to ADDR; "loopback" listens on
// 127.0.0.1 and connects to itself. Either exits 0 on success.
const dialArg = "-sandbox-test-net"

// pdeathsigArg makes the test binary print the signal it gets when its
// parent dies (PR_GET_PDEATHSIG).
const pdeathsigArg = "-sandbox-test-pdeathsig"

// The test binary is its own launcher, as ralph is: the tests confine
// commands with it as Agent.Launcher.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		Launch(os.Args[2:])
	}
	if len(os.Args) > 2 && os.Args[1] == dialArg {
		os.Exit(netHelper(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == pdeathsigArg {
		os.Exit(printParentDeathSignal())
	}
	os.Exit(run(m))
}

// run runs the tests with a user cache of their own: Detect records its
// probe there (netnsEntry), and the test binary's record would replace
// the entry of the ralph of the person who runs them.
func run(m *testing.M) int {
	cache, err := os.MkdirTemp("", "ralph-sandbox-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(cache) }()
	_ = os.Setenv("XDG_CACHE_HOME", cache)
	return m.Run()
}

func netHelper(args []string) int {
	addr := ""
	if args[0] == "dial" && len(args) > 1 {
		addr = args[1]
	} else {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer l.Close()
		addr = l.Addr().String()
	}
	c, err := net.DialTimeout("tcp4", addr, 30*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = c.Close()
	return 0
}

func printParentDeathSignal() int {
	sig, err := parentDeathSignal()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(sig)
	return 0
}
