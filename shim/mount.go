package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount is one mount of a container's root file system, as containerd's
// snapshotters describe it (containerd.types.Mount).
type Mount struct {
	Type    string
	Source  string
	Target  string
	Options []string
}

// mountFlags are the fstab options that are mount flags: each sets
// (clear=false) or clears (clear=true) its flag.
var mountFlags = map[string]struct {
	clear bool
	flag  uintptr
}{
	"async":         {true, unix.MS_SYNCHRONOUS},
	"atime":         {true, unix.MS_NOATIME},
	"bind":          {false, unix.MS_BIND},
	"defaults":      {false, 0},
	"dev":           {true, unix.MS_NODEV},
	"diratime":      {true, unix.MS_NODIRATIME},
	"dirsync":       {false, unix.MS_DIRSYNC},
	"exec":          {true, unix.MS_NOEXEC},
	"mand":          {false, unix.MS_MANDLOCK},
	"noatime":       {false, unix.MS_NOATIME},
	"nodev":         {false, unix.MS_NODEV},
	"nodiratime":    {false, unix.MS_NODIRATIME},
	"noexec":        {false, unix.MS_NOEXEC},
	"nomand":        {true, unix.MS_MANDLOCK},
	"norelatime":    {true, unix.MS_RELATIME},
	"nostrictatime": {true, unix.MS_STRICTATIME},
	"nosuid":        {false, unix.MS_NOSUID},
	"rbind":         {false, unix.MS_BIND | unix.MS_REC},
	"relatime":      {false, unix.MS_RELATIME},
	"remount":       {false, unix.MS_REMOUNT},
	"ro":            {false, unix.MS_RDONLY},
	"rw":            {true, unix.MS_RDONLY},
	"strictatime":   {false, unix.MS_STRICTATIME},
	"suid":          {true, unix.MS_NOSUID},
	"sync":          {false, unix.MS_SYNCHRONOUS},
}

// parseMountOptions splits fstab options into mount flags and the data
// string passed to the file system.
func parseMountOptions(options []string) (uintptr, string) {
	var flags uintptr
	var data []string
	for _, o := range options {
		if f, ok := mountFlags[o]; ok {
			if f.clear {
				flags &^= f.flag
			} else {
				flags |= f.flag
			}
			continue
		}
		data = append(data, o)
	}
	return flags, strings.Join(data, ",")
}

// mountAll mounts ms, in order, onto target (their own Target, if any, is
// under it). On failure the mounts already made are undone.
func mountAll(ms []Mount, target string) (retErr error) {
	var done []string
	defer func() {
		if retErr != nil {
			for i := len(done) - 1; i >= 0; i-- {
				unix.Unmount(done[i], unix.MNT_DETACH)
			}
		}
	}()
	for _, m := range ms {
		dst := target
		if m.Target != "" {
			dst = filepath.Join(target, filepath.Clean("/"+m.Target))
		}
		flags, data := parseMountOptions(m.Options)
		if len(data) > os.Getpagesize()-1 {
			return fmt.Errorf("mount options of %s are longer than a page", m.Source)
		}
		if flags&unix.MS_BIND == 0 {
			if err := unix.Mount(m.Source, dst, m.Type, flags, data); err != nil {
				return fmt.Errorf("mounting %s (%s) on %s: %w", m.Source, m.Type, dst, err)
			}
			done = append(done, dst)
			continue
		}
		// A bind mount is made read-only by a second step, a remount.
		if err := unix.Mount(m.Source, dst, "", flags&^unix.MS_RDONLY, data); err != nil {
			return fmt.Errorf("bind mounting %s on %s: %w", m.Source, dst, err)
		}
		done = append(done, dst)
		if flags&unix.MS_RDONLY != 0 {
			if err := unix.Mount("", dst, "", flags|unix.MS_REMOUNT, ""); err != nil {
				return fmt.Errorf("remounting %s read-only: %w", dst, err)
			}
		}
	}
	return nil
}

// unmountAll unmounts everything mounted on or below target, deepest
// first, and tolerates nothing being mounted.
func unmountAll(target string) error {
	for i := 0; i < 64; i++ {
		err := unix.Unmount(target, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unmounting %s: %w", target, err)
		}
	}
	return fmt.Errorf("unmounting %s: still mounted after 64 unmounts", target)
}
