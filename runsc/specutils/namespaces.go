package specutils

import (
	"fmt"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// namespaceFlags are the CLONE_NEW* flags of the spec's namespace types,
// as ioctl(NS_GET_NSTYPE) reports them.
var namespaceFlags = map[specs.LinuxNamespaceType]int{
	specs.PIDNamespace:     unix.CLONE_NEWPID,
	specs.NetworkNamespace: unix.CLONE_NEWNET,
	specs.MountNamespace:   unix.CLONE_NEWNS,
	specs.IPCNamespace:     unix.CLONE_NEWIPC,
	specs.UTSNamespace:     unix.CLONE_NEWUTS,
	specs.UserNamespace:    unix.CLONE_NEWUSER,
	specs.CgroupNamespace:  unix.CLONE_NEWCGROUP,
	specs.TimeNamespace:    unix.CLONE_NEWTIME,
}

// nsGetNSType is ioctl_ns(2)'s NS_GET_NSTYPE.
const nsGetNSType = 0xb703

// checkNamespacePath checks that path names a namespace of type typ on
// the host, as the spec requires ("a runtime MUST generate an error" when
// the path is not a namespace of that type).
func checkNamespacePath(typ specs.LinuxNamespaceType, path string) error {
	// Only a file of nsfs is opened: opening anything else (a FIFO, a
	// device) could block or act.
	var sfs unix.Statfs_t
	if err := unix.Statfs(path, &sfs); err != nil {
		return &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	if sfs.Type != unix.NSFS_MAGIC {
		return fmt.Errorf("%q is not a namespace", path)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	got, err := unix.IoctlRetInt(fd, nsGetNSType)
	if err != nil {
		return fmt.Errorf("%q is not a namespace: %w", path, err)
	}
	if want := namespaceFlags[typ]; got != want {
		return fmt.Errorf("%q is not a %s namespace", path, typ)
	}
	return nil
}
