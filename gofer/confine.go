package gofer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Confine shuts the calling gofer process into root: it makes every mount
// private, so nothing propagates to or from the host, bind-mounts root on
// itself, pivots into it and detaches the old root. Afterwards "/" is root
// and nothing outside it can be named; serve it with Config.Root = "/".
//
// The process must already be alone in its own mount namespace: start the
// gofer with CLONE_NEWNS (exec.Cmd's SysProcAttr.Unshareflags or
// Cloneflags). A Go program cannot move itself into a new mount namespace,
// because unshare(CLONE_NEWNS) only moves the calling thread. Confine
// checks that it is not in the namespace of its parent or of init and
// refuses to touch anything if it is, so it can never change the host's
// mounts. Confine needs CAP_SYS_ADMIN in that namespace. Call it before
// opening anything, and before starting goroutines that use paths.
func Confine(root string) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("gofer: confine: root %q is not an absolute path", root)
	}
	own, err := inOwnMountNamespace()
	if err != nil {
		return fmt.Errorf("gofer: confine: %w", err)
	}
	if !own {
		return errors.New("gofer: confine: not in a mount namespace of its own; start the gofer with CLONE_NEWNS")
	}
	if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("gofer: confine: make mounts private: %w", err)
	}
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("gofer: confine: bind mount %q: %w", root, err)
	}
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("gofer: confine: chdir %q: %w", root, err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one;
	// detaching "." then removes it, leaving the new root visible.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("gofer: confine: pivot_root into %q: %w", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("gofer: confine: detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("gofer: confine: chdir /: %w", err)
	}
	return nil
}

// inOwnMountNamespace reports whether this process's mount namespace
// differs from its parent's and from init's. It fails closed: if neither
// can be compared, it returns an error.
func inOwnMountNamespace() (bool, error) {
	self, err := nsID("/proc/self/ns/mnt")
	if err != nil {
		return false, err
	}
	var others []string
	if ppid := os.Getppid(); ppid > 0 {
		others = append(others, "/proc/"+strconv.Itoa(ppid)+"/ns/mnt")
	}
	if me, err := os.Readlink("/proc/self"); err != nil || me != "1" {
		others = append(others, "/proc/1/ns/mnt")
	}
	compared := 0
	for _, p := range others {
		id, err := nsID(p)
		if err != nil {
			continue
		}
		compared++
		if id == self {
			return false, nil
		}
	}
	if compared == 0 {
		return false, errors.New("cannot compare mount namespace with parent's or init's")
	}
	return true, nil
}

type nsIdent struct{ dev, ino uint64 }

func nsID(path string) (nsIdent, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nsIdent{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return nsIdent{st.Dev, st.Ino}, nil
}
