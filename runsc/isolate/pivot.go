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
// opened before the call keep working. It is StartPivotToEmptyRoot and
// its Wait.
func PivotToEmptyRoot() error {
	p, err := StartPivotToEmptyRoot()
	if err != nil {
		return err
	}
	return p.Wait()
}

// Pivot is a pivot to an empty root whose old root is still being
// detached (StartPivotToEmptyRoot).
type Pivot struct {
	pid int
	res *[2]int64
}

// StartPivotToEmptyRoot is PivotToEmptyRoot that returns as soon as the
// empty root is the process's root, leaving the old root's detachment and
// the new root's read-only remount to a child process: detaching the old
// root waits for an RCU grace period (1 to 8 ms on these machines), which
// the caller can spend on something else. Until Wait has returned nil,
// the old root is still stacked on the new one (reachable through the
// current directory, "."): the caller must not run untrusted code before.
// The child has its own copy of the caller's credentials, so the caller
// may drop its capabilities meanwhile.
func StartPivotToEmptyRoot() (*Pivot, error) {
	// Nothing we do below may propagate to the host's mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("none", scratchMount, "tmpfs", rootFlags, "size=4k,nr_inodes=1,mode=0555"); err != nil {
		return nil, fmt.Errorf("mounting empty root on %s: %w", scratchMount, err)
	}
	if err := unix.Chdir(scratchMount); err != nil {
		return nil, fmt.Errorf("chdir %s: %w", scratchMount, err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one at
	// "/"; detaching it then leaves the new root alone (pivot_root(2)).
	// Root and current directory are the new root afterwards, but "."
	// resolves to the top of what is stacked there, the old root.
	if err := unix.PivotRoot(".", "."); err != nil {
		return nil, fmt.Errorf("pivot_root: %w", err)
	}
	pid, res, err := startDetach()
	if err != nil {
		return nil, fmt.Errorf("detaching the old root: %w", err)
	}
	return &Pivot{pid: pid, res: res}, nil
}

// rootFlags are the new root's mount flags. The tmpfs superblock is
// read-only already; the detaching child makes the mount itself read-only
// too, so a remount of the superblock alone cannot undo it.
const rootFlags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// Wait waits for the old root to be detached and the new root remounted
// read-only, and reports how that went.
func (p *Pivot) Wait() error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(p.pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the old root's detachment: %w", err)
		}
		break
	}
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
	case ws.Exited() && ws.ExitStatus() == 1:
		return fmt.Errorf("detaching the old root: %w", unix.Errno(-p.res[0]))
	case ws.Exited() && ws.ExitStatus() == 2:
		return fmt.Errorf("remounting the new root read-only: %w", unix.Errno(-p.res[1]))
	default:
		return fmt.Errorf("detaching the old root: child ended with status %#x", uint32(ws))
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	return nil
}
