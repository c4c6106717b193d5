package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// confineLandlock makes cmd run the launcher, which restricts itself and
// execs the agent in place: the pid ralph started is the agent's, so its
// process group, signals and exit status are the agent's as before.
//
// The launcher's arguments: LauncherArg, the rules as JSON, "--", the
// agent's path, then its whole argv (argv[0] included, which some programs
// read).
func confineLandlock(a Agent, r rules, cmd *exec.Cmd) error {
	if a.Launcher == "" {
		return errors.New("sandbox: landlock needs ralph's own binary as its launcher, and none was given")
	}
	spec, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("sandbox: encode the launcher's rules: %w", err)
	}
	args := append([]string{a.Launcher, LauncherArg, string(spec), "--", cmd.Path}, cmd.Args...)
	cmd.Path, cmd.Args = a.Launcher, args
	if r.NetDeny {
		cmd.SysProcAttr = withNetNamespace(cmd.SysProcAttr)
	}
	return nil
}

func launch(args []string) {
	if len(args) > 0 && args[0] == probeArg {
		answerProbe()
	}
	if len(args) < 4 || args[1] != "--" {
		die(errors.New("usage: " + LauncherArg + " RULES -- PATH ARGV0 [ARGS…]"))
	}
	var r rules
	if err := json.Unmarshal([]byte(args[0]), &r); err != nil {
		die(fmt.Errorf("read the rules: %w", err))
	}
	if r.NetDeny {
		if err := loopbackUp(); err != nil {
			die(err)
		}
	}
	if err := restrict(r); err != nil {
		die(err)
	}
	if err := dieWithParent(); err != nil {
		die(err)
	}
	err := syscall.Exec(args[2], args[3:], os.Environ())
	die(fmt.Errorf("exec %s: %w", args[2], err))
}

// dieWithParent makes the thread that is about to exec the agent carry the
// SIGKILL its loop set to reach the launcher if the loop dies. The kernel
// keeps that setting per thread: the loop set it on the launcher's first
// thread, but Go may run main on another, and an exec from another thread
// makes that thread the process, with no such setting: the agent would
// outlive a loop killed outright. Locked to this thread, it is set where the
// exec happens; a loop that died before it was set is noticed by the parent
// having changed, and the agent is not started.
func dieWithParent() error {
	parent := os.Getppid()
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("tie the agent to its loop (PR_SET_PDEATHSIG): %w", err)
	}
	if os.Getppid() != parent {
		return errors.New("the loop that started this agent is gone")
	}
	return nil
}

// die ends the launcher as a shell ends a command it cannot run, so that
// the iteration's failure quotes the reason.
func die(err error) {
	fmt.Fprintf(os.Stderr, "ralph: sandbox: %v\n", err)
	os.Exit(126)
}

// landlockConfig is the kernel's own ABI's configuration, up to the newest
// go-landlock knows, never one below minLandlockABI and never best effort:
// a sandbox that quietly did less would be worse than a refusal.
// Network rules are left out: Landlock's are by port, and cannot tell
// loopback from the world; network: deny is a network namespace instead.
func landlockConfig() (landlock.Config, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < minLandlockABI {
		return landlock.Config{}, fmt.Errorf("this kernel's Landlock is ABI %d, ralph needs %d (Linux 6.2)", abi, minLandlockABI)
	}
	configs := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
		landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	cfg := configs[min(abi, len(configs))-1]
	cfg.HandledAccessNet = 0
	return cfg, nil
}

// restrict applies r to this process and all it will exec.
//
// Landlock only allows, so "everything but the denied paths" is granted
// entry by entry: every entry of each ancestor of a denied path, but for
// the denied path and the other ancestors (readGrants). Writable paths get
// every right, moving files in and out of them (refer) included, ioctl on
// devices and connecting to the sockets made there; devices the same.
// A path that vanished since the rules were made is skipped.
func restrict(r rules) error {
	cfg, err := landlockConfig()
	if err != nil {
		return err
	}
	g, err := readGrants(r.Deny)
	if err != nil {
		return err
	}
	devDirs, devFiles := splitDirs(r.Devices)
	return cfg.Restrict(
		landlock.RODirs(g.dirs...).IgnoreIfMissing(),
		landlock.ROFiles(g.files...).IgnoreIfMissing(),
		landlock.PathAccess(llsys.AccessFSReadDir, g.listable...).IgnoreIfMissing(),
		landlock.RWDirs(r.WriteDirs...).WithRefer().WithIoctlDev().WithResolveUnix().IgnoreIfMissing(),
		landlock.RWFiles(r.WriteFiles...).WithIoctlDev().WithResolveUnix().IgnoreIfMissing(),
		landlock.RWDirs(devDirs...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(devFiles...).WithIoctlDev().IgnoreIfMissing(),
	)
}

// grants are the read grants that leave the denied paths out.
type grants struct {
	dirs, files []string
	// listable are the denied paths' ancestors, whose entries can be
	// listed: without it `ls ~` fails and so do tools that scan a
	// directory. The price is that the names in a denied directory (not
	// its contents) can be listed too, since a Landlock grant covers the
	// whole tree beneath it.
	listable []string
}

// readGrants walks from / down to each denied path and grants read on
// every entry on the way that is neither denied nor itself on the way to a
// denied path. Links are not granted: Landlock checks the inode a path
// resolves to, which is granted (or not) through its own tree, so a link
// to a denied file stays unreadable. With nothing denied, / is granted.
func readGrants(deny []string) (grants, error) {
	var g grants
	if len(deny) == 0 {
		g.dirs = []string{"/"}
		return g, nil
	}
	onTheWay := map[string]bool{}
	for _, d := range deny {
		for p := filepath.Dir(d); !onTheWay[p]; p = filepath.Dir(p) {
			onTheWay[p] = true
			if p == "/" {
				break
			}
		}
	}
	for dir := range onTheWay {
		g.listable = append(g.listable, dir)
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return g, fmt.Errorf("list %s to grant its entries: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case onTheWay[p] || slices.Contains(deny, p) || e.Type()&os.ModeSymlink != 0:
			case e.IsDir():
				g.dirs = append(g.dirs, p)
			default:
				g.files = append(g.files, p)
			}
		}
	}
	return g, nil
}

// splitDirs sorts paths into directories and the rest.
func splitDirs(paths []string) (dirs, files []string) {
	for _, p := range paths {
		info, err := os.Stat(p)
		switch {
		case err != nil:
		case info.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}
