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

// ConfineMounts shuts the calling gofer process into a new root that
// holds nothing but the container's root and the sources of its bind
// mounts, and returns the paths to serve them by afterwards: root as
// served root, binds (same order, Path rewritten) as Config.Mounts.
//
// root and every binds[i].Path are host paths from the trusted caller
// (runsc): symlinks in them are followed here, on the host side, as runc
// does. Each is cloned as a detached mount tree (open_tree with
// OPEN_TREE_CLONE; recursively for the root and a Recursive bind) before
// anything else changes, and a
// read-only bind's clone is made read-only (mount_setattr), so the host
// kernel refuses writes through it whatever the server does. A
// staging tmpfs is then mounted over root's path (over /tmp when root is
// "/"), the clones are moved into it ("/root", "/m<i>" for a directory,
// "/m<i>/f" for any other file), it is made read-only, and the process
// pivots into it and detaches the old root. Nothing else of the host can
// be named afterwards, and a served tree's ".." is never walked (names
// are single components).
//
// The same preconditions as Confine hold: a mount namespace of the
// process's own, CAP_SYS_ADMIN in it, no goroutines using paths yet.
func ConfineMounts(root string, binds []Mount) (servedRoot string, served []Mount, err error) {
	if !filepath.IsAbs(root) {
		return "", nil, fmt.Errorf("gofer: confine: root %q is not an absolute path", root)
	}
	for i, b := range binds {
		if !filepath.IsAbs(b.Path) {
			return "", nil, fmt.Errorf("gofer: confine: bind mount %d: source %q is not an absolute path", i+1, b.Path)
		}
	}
	own, err := inOwnMountNamespace()
	if err != nil {
		return "", nil, fmt.Errorf("gofer: confine: %w", err)
	}
	if !own {
		return "", nil, errors.New("gofer: confine: not in a mount namespace of its own; start the gofer with CLONE_NEWNS")
	}
	if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: make mounts private: %w", err)
	}

	// Clone every tree first, while every path still means the host's.
	var trees []int
	defer func() {
		for _, fd := range trees {
			unix.Close(fd)
		}
	}()
	clone := func(p string, ro, rec bool) (int, bool, error) {
		flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
		if rec {
			flags |= unix.AT_RECURSIVE
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, flags)
		if err != nil {
			return -1, false, fmt.Errorf("clone %q: %w", p, err)
		}
		trees = append(trees, fd)
		var st unix.Stat_t
		if err := fstat(fd, &st); err != nil {
			return -1, false, fmt.Errorf("stat %q: %w", p, err)
		}
		if ro {
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
			if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
				return -1, false, fmt.Errorf("make %q read-only: %w", p, err)
			}
		}
		return fd, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
	}
	rootTree, isDir, err := clone(root, false, true)
	if err != nil {
		return "", nil, fmt.Errorf("gofer: confine: root: %w", err)
	}
	if !isDir {
		return "", nil, fmt.Errorf("gofer: confine: root %q: %w", root, unix.ENOTDIR)
	}
	bindTrees := make([]int, len(binds))
	bindDirs := make([]bool, len(binds))
	for i, b := range binds {
		if bindTrees[i], bindDirs[i], err = clone(b.Path, b.ReadOnly, b.Recursive); err != nil {
			return "", nil, fmt.Errorf("gofer: confine: bind mount %d: %w", i+1, err)
		}
	}

	stage := root
	if stage == "/" {
		stage = "/tmp"
	}
	if err := unix.Mount("moat-gofer", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: staging tmpfs on %q: %w", stage, err)
	}
	attach := func(tree int, target string) error {
		if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("move mount to %q: %w", target, err)
		}
		return nil
	}
	if err := unix.Mkdir(stage+"/root", 0o755); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: %w", err)
	}
	if err := attach(rootTree, stage+"/root"); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: root: %w", err)
	}
	served = make([]Mount, len(binds))
	for i, b := range binds {
		dir := "/m" + strconv.Itoa(i+1)
		if err := unix.Mkdir(stage+dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("gofer: confine: %w", err)
		}
		p := dir
		if !bindDirs[i] {
			p = dir + "/f"
			fd, err := unix.Open(stage+p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err != nil {
				return "", nil, fmt.Errorf("gofer: confine: file mount point: %w", err)
			}
			unix.Close(fd)
		}
		if err := attach(bindTrees[i], stage+p); err != nil {
			return "", nil, fmt.Errorf("gofer: confine: bind mount %d: %w", i+1, err)
		}
		served[i] = Mount{Path: p, ReadOnly: b.ReadOnly}
	}
	if err := unix.Mount("", stage, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: staging tmpfs read-only: %w", err)
	}
	if err := unix.Chdir(stage); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: chdir %q: %w", stage, err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: pivot_root into %q: %w", stage, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return "", nil, fmt.Errorf("gofer: confine: chdir /: %w", err)
	}
	return "/root", served, nil
}
