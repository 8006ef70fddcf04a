package isolate

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// scratchMount is where the empty root is mounted before pivot_root. It
// must exist on every host and it is hidden only inside the private mount
// namespace, so /proc, which runsc itself needs to start, is used.
const scratchMount = "/proc"

// PivotToEmptyRoot makes an empty, read-only tmpfs the root of the calling
// process's mount namespace and detaches the old root, after which no host
// path is reachable by name. The process must be alone in a mount
// namespace of its own (CLONE_NEWNS) and hold CAP_SYS_ADMIN; every thread
// of the process moves with it (pivot_root moves all tasks whose root or
// cwd was the old root, and Go threads share one fs struct). Descriptors
// opened before the call keep working.
func PivotToEmptyRoot() error {
	// Nothing we do below may propagate to the host's mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("none", scratchMount, "tmpfs", flags, "size=4k,nr_inodes=1,mode=0555"); err != nil {
		return fmt.Errorf("mounting empty root on %s: %w", scratchMount, err)
	}
	if err := unix.Chdir(scratchMount); err != nil {
		return fmt.Errorf("chdir %s: %w", scratchMount, err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one at
	// "/"; detaching it then leaves the new root alone (pivot_root(2)).
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	// The tmpfs superblock is read-only already; make the mount itself
	// read-only too, so a remount of the superblock alone cannot undo it.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|flags, ""); err != nil {
		return fmt.Errorf("remounting the new root read-only: %w", err)
	}
	return nil
}
