package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// confineBwrap makes cmd run under bubblewrap.
func confineBwrap(r rules, cmd *exec.Cmd) error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("sandbox: bubblewrap (bwrap) is not on PATH")
	}
	args := append([]string{bwrap}, bwrapArgs(r)...)
	args = append(append(args, "--", cmd.Path), cmd.Args[1:]...)
	cmd.Path, cmd.Args = bwrap, args
	return nil
}

// bwrapArgs are bwrap's options for r: the whole tree read-only, a /dev of
// its own, the writable paths bound over it and the denied ones hidden
// (an empty tmpfs over a directory, /dev/null over a file).
//
// /dev is bwrap's own (null, zero, full, random, urandom, tty, pts, ptmx,
// shm): binding the host's would let an agent running as root write raw
// disks. /tmp stays the host's, read-only, with TMPDIR at the private
// directory as under Landlock: a tmpfs over it would hide the programs
// that live there (a test's build of ralph, a scripted agent) and give the
// two mechanisms different rules. No --new-session: ralph signals the
// agent's process group, which a new session would leave.
//
// Mounts apply in order, so they are sorted by depth: a writable path
// inside a hidden directory is bound after the tmpfs that hides its
// parent, and a file hidden inside a writable tree after that tree.
func bwrapArgs(r rules) []string {
	args := []string{"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"}
	var mounts []bwrapMount
	add := func(path string, opts ...string) { mounts = append(mounts, bwrapMount{path, opts}) }
	for _, p := range append(slices.Clone(r.WriteDirs), r.WriteFiles...) {
		if !strings.HasPrefix(p, "/dev/") {
			add(p, "--bind", p, p)
		}
	}
	for _, p := range r.ReadOnly {
		add(p, "--ro-bind", p, p)
	}
	for _, p := range r.Deny {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			add(p, "--tmpfs", p)
		} else {
			add(p, "--ro-bind", "/dev/null", p)
		}
	}
	slices.SortStableFunc(mounts, func(a, b bwrapMount) int {
		return strings.Count(a.path, "/") - strings.Count(b.path, "/")
	})
	for _, m := range mounts {
		args = append(args, m.opts...)
	}
	if r.NetDeny {
		args = append(args, "--unshare-net")
	}
	return args
}

// bwrapMount is one mount of bwrap's options, at its path.
type bwrapMount struct {
	path string
	opts []string
}
