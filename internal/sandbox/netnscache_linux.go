package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsEntry is where a user's cache remembers that the network
// namespace's probe succeeded, so that the loops of an autopilot whose
// agents have network: deny do not each start ralph again to learn it:
// a file named by everything the answer depends on (netnsKey); "" when
// there is nowhere to keep it.
//
// Only success is remembered. A wrong "yes" fails closed: the kernel
// refuses the namespace when the launcher is started, or the launcher
// cannot bring loopback up and exits 126, and the agent never runs. A
// wrong "no" could send auto to a weaker mechanism, or to none. What can
// change the answer within one boot (a sysctl) is caught by ralph doctor,
// which always probes and rewrites the entry.
type netnsEntry string

// netnsCacheEntry is the entry of this ralph binary, kernel, boot and user.
func netnsCacheEntry() netnsEntry {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	key, err := netnsKey()
	if err != nil {
		return ""
	}
	return netnsEntry(filepath.Join(dir, "ralph", "netns-"+key))
}

// netnsKey names what the probe's answer depends on: the binary itself
// (its file's identity and time, so that no other build of ralph, a
// release or a rebuild in a clone, trusts it), the kernel's release and
// boot, and the ids the user namespace maps.
func netnsKey() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("stat %s: no device and inode", exe)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return "", err
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%d\x00%s\x00%s\x00%d\x00%d", exe, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(),
		unix.ByteSliceToString(uts.Release[:]), boot, os.Geteuid(), os.Getegid())
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// holds says the entry records a success: a regular file of this user's.
func (e netnsEntry) holds() bool {
	if e == "" {
		return false
	}
	fi, err := os.Lstat(string(e))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// record keeps a success, as the only entry (those of other binaries and
// boots are never read again), and forgets a failure. A cache that cannot
// be written costs the next run a probe, nothing else.
func (e netnsEntry) record(ok bool) {
	if e == "" {
		return
	}
	if !ok {
		_ = os.Remove(string(e))
		return
	}
	dir := filepath.Dir(string(e))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	old, _ := filepath.Glob(filepath.Join(dir, "netns-*"))
	for _, o := range old {
		if o != string(e) {
			_ = os.Remove(o)
		}
	}
	if e.holds() {
		return
	}
	// What is there is not an entry of ours (a link, say): it goes, and
	// O_EXCL makes sure no link planted since is followed.
	_ = os.Remove(string(e))
	f, err := os.OpenFile(string(e), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err == nil {
		_ = f.Close()
	}
}
