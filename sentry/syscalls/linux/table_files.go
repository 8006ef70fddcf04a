package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// fileChangeSyscalls are the entries of file syscalls whose handlers live
// in sys_file.go, sys_read_write.go and sys_xattr.go (fallocate,
// sync_file_range, copy_file_range, fadvise64, readahead, the xattr
// family). Merged into AMD64 by init after linux64.go's, replacing its
// entries for these numbers.
func fileChangeSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_FALLOCATE:       full("fallocate", Fallocate),
		unix.SYS_COPY_FILE_RANGE: partial("copy_file_range", CopyFileRange, "copies through a Sentry buffer; EXDEV across file systems"),
		unix.SYS_FADVISE64:       partial("fadvise64", Fadvise64, "advice is checked and ignored"),
		unix.SYS_READAHEAD:       partial("readahead", Readahead, "checked; nothing is read ahead"),
		unix.SYS_SYNC_FILE_RANGE: partial("sync_file_range", SyncFileRange, "flushes the whole file's data"),
		unix.SYS_GETXATTR:        full("getxattr", Getxattr),
		unix.SYS_LGETXATTR:       full("lgetxattr", Lgetxattr),
		unix.SYS_FGETXATTR:       full("fgetxattr", Fgetxattr),
		unix.SYS_LISTXATTR:       full("listxattr", Listxattr),
		unix.SYS_LLISTXATTR:      full("llistxattr", Llistxattr),
		unix.SYS_FLISTXATTR:      full("flistxattr", Flistxattr),
		unix.SYS_SETXATTR:        partial("setxattr", Setxattr, "system.* (POSIX ACLs) is EOPNOTSUPP"),
		unix.SYS_LSETXATTR:       partial("lsetxattr", Lsetxattr, "system.* (POSIX ACLs) is EOPNOTSUPP"),
		unix.SYS_FSETXATTR:       partial("fsetxattr", Fsetxattr, "system.* (POSIX ACLs) is EOPNOTSUPP"),
		unix.SYS_REMOVEXATTR:     full("removexattr", Removexattr),
		unix.SYS_LREMOVEXATTR:    full("lremovexattr", Lremovexattr),
		unix.SYS_FREMOVEXATTR:    full("fremovexattr", Fremovexattr),
	}
}

func init() { tableParts = append(tableParts, fileChangeSyscalls) }
