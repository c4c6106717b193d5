package treewatch

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// localFileSystems are the file systems whose every change through the
// kernel of this machine reaches inotify. Network and FUSE file systems
// are left out: a change made elsewhere is never notified here.
var localFileSystems = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // also ext2 and ext3
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.TMPFS_MAGIC:           true,
	unix.OVERLAYFS_SUPER_MAGIC: true,
	unix.F2FS_SUPER_MAGIC:      true,
	0x2fc12fc1:                 true, // zfs
	0xca451a4e:                 true, // bcachefs
}

// reliable reports whether every root lies on a local file system.
func reliable(roots []string) bool {
	for _, root := range roots {
		var st unix.Statfs_t
		if err := unix.Statfs(root, &st); err != nil || !localFileSystems[int64(st.Type)] {
			return false
		}
	}
	return len(roots) > 0
}

// watchBudget is how many inotify watches the kernel allows this user in
// all; 0 when it does not say.
func watchBudget() int {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}
