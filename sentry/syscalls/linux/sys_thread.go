package linux

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// Clone implements clone(2): flags, stack, parent_tid, child_tid, tls.
func Clone(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	flags := a[0].Uint64()
	if flags&unix.CLONE_PIDFD != 0 && flags&unix.CLONE_PARENT_SETTID != 0 {
		return 0, unix.EINVAL
	}
	tid, err := t.Clone(kernel.CloneOptions{
		Flags:      flags &^ 0xff,
		ExitSignal: kernel.Signal(flags & 0xff),
		Stack:      a[1].Pointer(),
		ParentTID:  a[2].Pointer(),
		ChildTID:   a[3].Pointer(),
		TLS:        a[4].Pointer(),
		PIDFD:      a[2].Pointer(), // CLONE_PIDFD shares parent_tid
	})
	return uintptr(tid), err
}

// Fork implements fork(2).
func Fork(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tid, err := t.Clone(kernel.CloneOptions{ExitSignal: kernel.SIGCHLD})
	return uintptr(tid), err
}

// Vfork implements vfork(2).
func Vfork(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	tid, err := t.Clone(kernel.CloneOptions{Flags: unix.CLONE_VM | unix.CLONE_VFORK, ExitSignal: kernel.SIGCHLD})
	return uintptr(tid), err
}

// clone3Size0 is CLONE_ARGS_SIZE_VER0.
const clone3Size0 = 64

// Clone3 implements clone3(2).
func Clone3(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	addr, size := a[0].Pointer(), a[1].Uint64()
	if size > 4096 {
		return 0, unix.E2BIG // Linux: larger than a page
	}
	if size < clone3Size0 {
		return 0, unix.EINVAL
	}
	b := make([]byte, size)
	if _, err := t.CopyInBytes(addr, b); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	// Fields past those we know must be zero.
	known := 88 // up to and including cgroup (VER2)
	for i := known; i < len(b); i++ {
		if b[i] != 0 {
			return 0, unix.E2BIG
		}
	}
	field := func(off int) uint64 {
		if off+8 > len(b) {
			return 0
		}
		return le.Uint64(b[off:])
	}
	flags := field(0)
	exitSignal := field(32)
	stack, stackSize := field(40), field(48)
	if field(56) != 0 { // tls
		flags |= 0 // TLS only with CLONE_SETTLS, as Linux.
	}
	if field(64) != 0 || field(72) != 0 { // set_tid, set_tid_size
		t.Log().Info("clone3: set_tid is not supported")
		return 0, unix.EINVAL
	}
	if flags&unix.CLONE_INTO_CGROUP != 0 {
		t.Log().Info("clone3: CLONE_INTO_CGROUP is not supported")
		return 0, unix.EINVAL
	}
	if exitSignal > 64 || flags&0xff != 0 {
		return 0, unix.EINVAL
	}
	if (stack == 0) != (stackSize == 0) {
		return 0, unix.EINVAL
	}
	var sp uintptr
	if stack != 0 {
		sp = uintptr(stack + stackSize)
	}
	tid, err := t.Clone(kernel.CloneOptions{
		Flags:      flags,
		ExitSignal: kernel.Signal(exitSignal),
		Stack:      sp,
		ParentTID:  uintptr(field(24)),
		ChildTID:   uintptr(field(16)),
		TLS:        uintptr(field(56)),
		PIDFD:      uintptr(field(8)),
	})
	return uintptr(tid), err
}

// Execve implements execve(2).
func Execve(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return execveat(t, unix.AT_FDCWD, a[0].Pointer(), a[1].Pointer(), a[2].Pointer(), 0)
}

// Execveat implements execveat(2).
func Execveat(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return execveat(t, a[0].Int(), a[1].Pointer(), a[2].Pointer(), a[3].Pointer(), a[4].Int())
}

func execveat(t *kernel.Task, dirfd int32, pathAddr, argvAddr, envAddr uintptr, flags int32) (uintptr, error) {
	if flags&^(unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW) != 0 {
		return 0, unix.EINVAL
	}
	p, err := t.CopyInPath(pathAddr)
	if err != nil {
		return 0, err
	}
	if p == "" && flags&unix.AT_EMPTY_PATH == 0 {
		// An empty path names nothing unless AT_EMPTY_PATH says it is
		// dirfd itself.
		return 0, unix.ENOENT
	}
	argv, err := copyInStringArray(t, argvAddr)
	if err != nil {
		return 0, err
	}
	envv, err := copyInStringArray(t, envAddr)
	if err != nil {
		return 0, err
	}
	start, err := startDir(t, dirfd, p, flags&unix.AT_EMPTY_PATH != 0)
	if err != nil {
		return 0, err
	}
	o := kernel.ExecOptions{
		Start:     start,
		Path:      p,
		EmptyPath: flags&unix.AT_EMPTY_PATH != 0,
		NoFollow:  flags&unix.AT_SYMLINK_NOFOLLOW != 0,
		Argv:      argv,
		Envv:      envv,
	}
	// Relative to a descriptor the program is "/dev/fd/N[/path]"
	// (Linux's alloc_bprm), which a close-on-exec N makes unreachable.
	if dirfd != unix.AT_FDCWD && !strings.HasPrefix(p, "/") {
		o.Filename = "/dev/fd/" + strconv.Itoa(int(dirfd))
		if p != "" {
			o.Filename += "/" + p
		}
		if f, fl, ok := t.FDTable().Get(dirfd); ok {
			f.DecRef()
			o.PathInaccessible = fl.CloseOnExec
		}
	}
	if err := t.Execve(o); err != nil {
		return 0, err
	}
	return 0, kernel.ErrNoSyscallReturn
}

// startDir returns where a path relative to dirfd starts.
func startDir(t *kernel.Task, dirfd int32, path string, emptyPath bool) (fs.VirtualDentry, error) {
	if len(path) > 0 && path[0] == '/' {
		return t.FSContext().Root(), nil
	}
	if dirfd == unix.AT_FDCWD {
		return t.FSContext().Cwd(), nil
	}
	f := t.FDTable().GetFile(dirfd)
	if f == nil {
		return fs.VirtualDentry{}, unix.EBADF
	}
	defer f.DecRef()
	vd := f.VirtualDentry()
	if path == "" && emptyPath {
		return vd, nil
	}
	st, err := vd.Stat(t)
	if err != nil {
		return fs.VirtualDentry{}, err
	}
	if !st.IsDir() {
		return fs.VirtualDentry{}, unix.ENOTDIR
	}
	return vd, nil
}

// Exit implements exit(2).
func Exit(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Exit(kernel.ExitedWith(int(a[0].Int())), false)
}

// ExitGroup implements exit_group(2).
func ExitGroup(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return 0, t.Exit(kernel.ExitedWith(int(a[0].Int())), true)
}

// wait options.
const (
	wNoHang    = 0x1
	wUntraced  = 0x2
	wExited    = 0x4
	wContinued = 0x8
	wNoWait    = 0x01000000
	wNoThread  = 0x20000000
	wAll       = 0x40000000
	wClone     = 0x80000000
)

// Wait4 implements wait4(2).
func Wait4(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid, statusAddr, options, rusageAddr := a[0].Int(), a[1].Pointer(), a[2].Uint(), a[3].Pointer()
	if options&^(wNoHang|wUntraced|wContinued|wNoThread|wAll|wClone) != 0 {
		return 0, unix.EINVAL
	}
	o := kernel.WaitOptions{
		Exited:    true,
		Stopped:   options&wUntraced != 0,
		Continued: options&wContinued != 0,
		NoHang:    options&wNoHang != 0,
		All:       options&wAll != 0,
		CloneOnly: options&wClone != 0,
		NoThread:  options&wNoThread != 0,
	}
	switch {
	case pid == -1:
	case pid == 0:
		o.PGID = t.PIDNamespace().ProcessGroupIDOf(t.ThreadGroup())
	case pid < -1:
		if pid == -2147483648 {
			return 0, unix.ESRCH
		}
		o.PGID = kernel.ThreadID(-pid)
	default:
		o.PID = kernel.ThreadID(pid)
	}
	r, err := t.Wait(o)
	if err != nil || r == nil {
		return 0, err
	}
	if statusAddr != 0 {
		if err := copyOutUint32(t, statusAddr, uint32(r.Status)); err != nil {
			return 0, err
		}
	}
	if rusageAddr != 0 {
		if err := copyOutRusage(t, rusageAddr, r.Utime, r.Stime, r.MaxRSS, r.Rusage); err != nil {
			return 0, err
		}
	}
	return uintptr(r.PID), nil
}

// waitid id types.
const (
	pAll   = 0
	pPID   = 1
	pPGID  = 2
	pPIDFD = 3
)

// Waitid implements waitid(2).
func Waitid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	idtype, id, infop, options, rusageAddr := a[0].Int(), a[1].Int(), a[2].Pointer(), a[3].Uint(), a[4].Pointer()
	if options&^(wNoHang|wUntraced|wExited|wContinued|wNoWait|wNoThread|wAll|wClone) != 0 {
		return 0, unix.EINVAL
	}
	if options&(wExited|wUntraced|wContinued) == 0 {
		return 0, unix.EINVAL
	}
	o := kernel.WaitOptions{
		Exited:    options&wExited != 0,
		Stopped:   options&wUntraced != 0,
		Continued: options&wContinued != 0,
		NoHang:    options&wNoHang != 0,
		NoWait:    options&wNoWait != 0,
		All:       options&wAll != 0,
		CloneOnly: options&wClone != 0,
		NoThread:  options&wNoThread != 0,
	}
	switch idtype {
	case pAll:
	case pPID:
		if id <= 0 {
			return 0, unix.EINVAL
		}
		o.PID = kernel.ThreadID(id)
	case pPGID:
		if id < 0 {
			return 0, unix.EINVAL
		}
		o.PGID = kernel.ThreadID(id)
		if id == 0 {
			o.PGID = t.PIDNamespace().ProcessGroupIDOf(t.ThreadGroup())
		}
	case pPIDFD:
		tg, nonblock, err := waitPIDFD(t, id)
		if err != nil {
			return 0, err
		}
		o.TG = tg
		if nonblock && !o.NoHang {
			// A PIDFD_NONBLOCK pidfd never sleeps: EAGAIN instead.
			o.NoHang = true
			r, err := t.Wait(o)
			if err == nil && r == nil {
				return 0, unix.EAGAIN
			}
			return waitidResult(t, r, err, infop, rusageAddr)
		}
	default:
		return 0, unix.EINVAL
	}
	r, err := t.Wait(o)
	return waitidResult(t, r, err, infop, rusageAddr)
}

// waitidResult writes waitid's siginfo and rusage for result r.
func waitidResult(t *kernel.Task, r *kernel.WaitResult, err error, infop, rusageAddr uintptr) (uintptr, error) {
	if err != nil {
		return 0, err
	}
	if infop != 0 {
		info := kernel.NewSignalInfo(0, 0)
		if r != nil {
			info = kernel.NewSignalInfo(kernel.SIGCHLD, r.Code)
			info.SetPIDUID(int32(r.PID), r.UID)
			info.SetStatus(r.SigStatus)
		}
		if _, err := t.CopyOutBytes(infop, info.Raw[:]); err != nil {
			return 0, err
		}
	}
	if rusageAddr != 0 && r != nil {
		if err := copyOutRusage(t, rusageAddr, r.Utime, r.Stime, r.MaxRSS, r.Rusage); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// copyOutRusage writes a struct rusage with the given times and peak
// resident size (bytes; ru_maxrss is in KiB).
func copyOutRusage(t *kernel.Task, addr uintptr, utime, stime time.Duration, maxRSS uint64, ru kernel.Rusage) error {
	b := make([]byte, 144)
	le := binary.LittleEndian
	u, s := timevalFromNanos(int64(utime)), timevalFromNanos(int64(stime))
	le.PutUint64(b[0:], uint64(u.Sec))
	le.PutUint64(b[8:], uint64(u.Usec))
	le.PutUint64(b[16:], uint64(s.Sec))
	le.PutUint64(b[24:], uint64(s.Usec))
	le.PutUint64(b[32:], maxRSS/1024)
	le.PutUint64(b[64:], ru.MinFlt)
	le.PutUint64(b[72:], ru.MajFlt)
	le.PutUint64(b[128:], ru.NVCsw)
	le.PutUint64(b[136:], ru.NIvCsw)
	_, err := t.CopyOutBytes(addr, b)
	return err
}

// Getpid implements getpid(2).
func Getpid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.Pid()), nil
}

// Gettid implements gettid(2).
func Gettid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.Tid()), nil
}

// Getppid implements getppid(2).
func Getppid(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return uintptr(t.Ppid()), nil
}

// SetTidAddress implements set_tid_address(2).
func SetTidAddress(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	t.SetClearChildTID(a[0].Pointer())
	return uintptr(t.Tid()), nil
}

// robustListHeadSize is sizeof(struct robust_list_head).
const robustListHeadSize = 24

// SetRobustList implements set_robust_list(2).
func SetRobustList(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	if a[1].Uint64() != robustListHeadSize {
		return 0, unix.EINVAL
	}
	t.SetRobustList(a[0].Pointer())
	return 0, nil
}

// GetRobustList implements get_robust_list(2).
func GetRobustList(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	pid := a[0].Int()
	target := t
	if pid != 0 {
		target = t.LookupTask(kernel.ThreadID(pid))
		if target == nil {
			return 0, unix.ESRCH
		}
	}
	if err := copyOutUint64(t, a[1].Pointer(), uint64(target.RobustList())); err != nil {
		return 0, err
	}
	return 0, copyOutUint64(t, a[2].Pointer(), robustListHeadSize)
}

// arch_prctl codes.
const (
	archSetGS    = 0x1001
	archSetFS    = 0x1002
	archGetFS    = 0x1003
	archGetGS    = 0x1004
	archGetCPUID = 0x1011
	archSetCPUID = 0x1012
)

// taskSizeMax is x86-64 Linux's TASK_SIZE_MAX: the last page below 2^47
// is never user memory, and FS/GS bases must lie below it (a base there
// would also make the next PTRACE_SETREGS fail).
const taskSizeMax = 1<<47 - 4096

// ArchPrctl implements arch_prctl(2).
func ArchPrctl(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	regs := t.Registers()
	switch a[0].Int() {
	case archSetFS:
		if a[1].Uint64() >= taskSizeMax {
			return 0, unix.EPERM
		}
		regs.Fs_base = a[1].Uint64()
	case archSetGS:
		if a[1].Uint64() >= taskSizeMax {
			return 0, unix.EPERM
		}
		regs.Gs_base = a[1].Uint64()
	case archGetFS:
		return 0, copyOutUint64(t, a[1].Pointer(), regs.Fs_base)
	case archGetGS:
		return 0, copyOutUint64(t, a[1].Pointer(), regs.Gs_base)
	case archGetCPUID:
		return 1, nil
	case archSetCPUID:
		return 0, unix.ENODEV
	default:
		return 0, unix.EINVAL
	}
	return 0, nil
}

// RestartSyscall implements restart_syscall(2).
func RestartSyscall(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	return t.RestartSyscall()
}
