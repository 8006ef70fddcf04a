package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// This file starts runsc do's two children: the sandbox process in its new
// user namespace without copying runsc's address space, and both side by
// side. Package os starts a process with vfork (clone(CLONE_VM|
// CLONE_VFORK): the child borrows the parent's memory until it execs)
// unless the child gets a user namespace: its uid and gid maps must then
// be written by the parent while the child waits, which a parent
// suspended by vfork cannot do, so it forks. On these machines that fork
// (page tables copied and write-protected, torn down again by the child's
// execve) and the hand-off for the maps made the sandbox start some 3 ms
// later than a vfork would. The maps Do needs, root to the caller's own
// ids with setgroups denied, are the ones a process may write for itself
// in a user namespace it created (user_namespaces(7)), so here the child
// writes them: spawn calls clone3 with CLONE_VM|CLONE_VFORK and
// CLONE_CLEAR_SIGHAND (Linux 5.5; before, startCmd falls back to
// cmd.Start) and the child runs a short list of system calls (rawSpawn,
// spawn_amd64.s) before its execve.
//
// A spawn holds syscall.ForkLock for writing until its child has exec'd,
// as package syscall's own forks do, so that no descriptor made without
// close-on-exec reaches the child. Package syscall's forks share one hold
// of the lock among themselves, but a spawn's hold excluded them: the
// gofer, started with cmd.Start, waited for the sandbox's execve (2-3 ms
// here) before it could fork. The gofer is spawned here too, and spawns
// share one hold of the lock (acquireForkLock).

// atFDCWD is unix.AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(99)

// spawnStep is one system call the child makes: nr with up to six
// arguments, and flags.
type spawnStep struct {
	nr, a0, a1, a2, a3, a4, a5, flags uintptr
}

const (
	// spawnPrevArg0 makes the previous step's result the first argument.
	spawnPrevArg0 = 1
	// spawnIgnoreFailure goes on when the step fails.
	spawnIgnoreFailure = 2
	// spawnWantA5 fails the step, with ESRCH, unless its result is its
	// sixth argument.
	spawnWantA5 = 4
)

// parentPID is the pid a child spawned in runsc's PID namespace must see
// as its parent once its parent-death signal is set (tests change it).
var parentPID = os.Getpid

// canSpawn reports whether spawn can start cmd: a command with its stdio
// and extra files all *os.File, either a new user namespace with the
// default maps (newUserNS with no maps of its own) or none and no maps,
// and no process attribute beyond namespaces, Setpgid and Pdeathsig.
func canSpawn(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	if a == nil || a.Cloneflags&^namespaceFlags != 0 || a.Credential != nil || a.Setsid || a.Setctty || a.Foreground ||
		a.Noctty || a.Chroot != "" || a.Ptrace || a.Pgid != 0 || len(a.AmbientCaps) != 0 || a.Unshareflags != 0 ||
		a.UseCgroupFD || a.PidFD != nil || a.GidMappingsEnableSetgroups || cmd.Dir != "" || cmd.Cancel != nil {
		return false
	}
	if a.Cloneflags&unix.CLONE_NEWUSER == 0 {
		if len(a.UidMappings) != 0 || len(a.GidMappings) != 0 {
			return false
		}
	} else if len(a.UidMappings) != 1 || len(a.GidMappings) != 1 ||
		a.UidMappings[0] != (syscall.SysProcIDMap{ContainerID: 0, HostID: os.Getuid(), Size: 1}) ||
		a.GidMappings[0] != (syscall.SysProcIDMap{ContainerID: 0, HostID: os.Getgid(), Size: 1}) {
		return false
	}
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if f, ok := f.(*os.File); !ok || f == nil {
			return false
		}
	}
	for _, f := range cmd.ExtraFiles {
		if f == nil {
			return false
		}
	}
	return true
}

// namespaceFlags are the clone flags canSpawn accepts: new namespaces.
// Others would change what the child's steps mean (CLONE_FILES: its dup3s
// would replace runsc's own descriptors; CLONE_PARENT: its getppid check
// would fail).
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// errNoSpawn is spawn's error when the kernel lacks what it needs.
var errNoSpawn = errors.New("clone3 with CLONE_CLEAR_SIGHAND is not supported")

// startCmd starts cmd with spawn when canSpawn allows and the kernel can,
// otherwise with cmd.Start.
func startCmd(cmd *exec.Cmd) error {
	if canSpawn(cmd) {
		if err := spawn(cmd); err != errNoSpawn {
			return err
		}
	}
	return cmd.Start()
}

// cloneArgs is struct clone_args (clone3(2)) up to cgroup.
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
}

// spawning counts the spawns under way, which share one hold of
// syscall.ForkLock.
var spawning struct {
	mu sync.Mutex
	n  int
}

// acquireForkLock holds syscall.ForkLock for writing, or joins the hold of
// the spawns under way. Unlike package syscall's, it does not let waiting
// readers in first: spawns that kept overlapping would keep them out, but
// runsc makes two at a time.
func acquireForkLock() {
	spawning.mu.Lock()
	defer spawning.mu.Unlock()
	if spawning.n == 0 {
		syscall.ForkLock.Lock()
	}
	spawning.n++
}

// releaseForkLock ends acquireForkLock's share of the hold, and the hold
// with the last one.
func releaseForkLock() {
	spawning.mu.Lock()
	defer spawning.mu.Unlock()
	spawning.n--
	if spawning.n == 0 {
		syscall.ForkLock.Unlock()
	}
}

// spawn is cmd.Start for a command canSpawn accepts; cmd.Wait reaps it as
// usual.
func spawn(cmd *exec.Cmd) error {
	a := cmd.SysProcAttr
	files := []*os.File{cmd.Stdin.(*os.File), cmd.Stdout.(*os.File), cmd.Stderr.(*os.File)}
	files = append(files, cmd.ExtraFiles...)
	// The child's descriptor i is a duplicate of files[i], above any
	// number the child assigns (dup3 into place would otherwise clobber
	// a source not yet copied); close-on-exec, they vanish at its execve.
	var dups []int
	defer func() {
		for _, d := range dups {
			unix.Close(d)
		}
	}()
	for _, f := range files {
		d, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, len(files)+3)
		if err != nil {
			return fmt.Errorf("duplicating descriptor %d: %w", f.Fd(), err)
		}
		dups = append(dups, d)
	}

	// Everything the child reads by address is pinned (spawn_unsafe.go).
	var pin runtime.Pinner
	defer pin.Unpin()
	var keep [][]byte
	str := func(s string) uintptr {
		b, p := cString(s, &pin)
		keep = append(keep, b)
		return p
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	argvKeep, argv, argvp := cStrings(cmd.Args, &pin)
	envKeep, envv, envp := cStrings(env, &pin)
	var all unix.Sigset_t
	old := new(unix.Sigset_t)
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}

	var steps []spawnStep
	write := func(path, data string) {
		steps = append(steps,
			spawnStep{nr: unix.SYS_OPENAT, a0: atFDCWD, a1: str(path), a2: unix.O_WRONLY | unix.O_CLOEXEC},
			spawnStep{nr: unix.SYS_WRITE, a1: str(data), a2: uintptr(len(data)), flags: spawnPrevArg0})
	}
	if a.Cloneflags&unix.CLONE_NEWUSER != 0 {
		write("/proc/self/setgroups", "deny")
		write("/proc/self/uid_map", fmt.Sprintf("0 %d 1\n", os.Getuid()))
		write("/proc/self/gid_map", fmt.Sprintf("0 %d 1\n", os.Getgid()))
	}
	if a.Setpgid {
		steps = append(steps, spawnStep{nr: unix.SYS_SETPGID})
	}
	if a.Pdeathsig != 0 {
		steps = append(steps, spawnStep{nr: unix.SYS_PRCTL, a0: unix.PR_SET_PDEATHSIG, a1: uintptr(a.Pdeathsig)})
		// A parent that died before the prctl sends no signal: the
		// child must see that its parent changed, as package os's
		// does. Across a new PID namespace getppid reads 0, so only
		// a child in runsc's can tell.
		if a.Cloneflags&unix.CLONE_NEWPID == 0 {
			steps = append(steps, spawnStep{nr: unix.SYS_GETPPID, a5: uintptr(parentPID()), flags: spawnWantA5})
		}
	}
	for i, d := range dups {
		steps = append(steps, spawnStep{nr: unix.SYS_DUP3, a0: uintptr(d), a1: uintptr(i)})
	}
	steps = append(steps,
		spawnStep{nr: unix.SYS_RT_SIGPROCMASK, a0: unix.SIG_SETMASK, a1: sigsetAddr(old, &pin), a3: 8},
		spawnStep{nr: unix.SYS_EXECVE, a0: str(cmd.Path), a1: argvp, a2: envp})

	// The parent's signal handlers must never run in the child, which
	// shares its memory: CLONE_CLEAR_SIGHAND resets them all (package
	// os's vfork child makes an rt_sigaction call for each of the 64).
	args := cloneArgs{
		flags:      unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_CLEAR_SIGHAND | uint64(a.Cloneflags),
		exitSignal: uint64(unix.SIGCHLD),
	}
	var res [2]int64
	// No descriptor made without close-on-exec may reach the child
	// (syscall.ForkLock's contract), and the thread must stay the one
	// whose death a.Pdeathsig follows.
	runtime.LockOSThread()
	acquireForkLock()
	unix.PthreadSigmask(unix.SIG_SETMASK, &all, old)
	pid, errno := rawSpawn(&args, cloneArgsSize, &steps[0], uintptr(len(steps)), &res)
	unix.PthreadSigmask(unix.SIG_SETMASK, old, nil)
	releaseForkLock()
	runtime.UnlockOSThread()
	runtime.KeepAlive(keep)
	runtime.KeepAlive(argvKeep)
	runtime.KeepAlive(argv)
	runtime.KeepAlive(envKeep)
	runtime.KeepAlive(envv)
	runtime.KeepAlive(steps)
	if errno == uintptr(unix.ENOSYS) || errno == uintptr(unix.EINVAL) {
		// Before Linux 5.5: no clone3 or no CLONE_CLEAR_SIGHAND.
		return errNoSpawn
	}
	if errno != 0 {
		return fmt.Errorf("clone3: %w", unix.Errno(errno))
	}
	if res[0] != 0 || res[1] != 0 {
		// The child failed before its execve and exited: reap it.
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(int(pid), &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		if res[0] == 0 {
			return fmt.Errorf("spawning %s: no execve", cmd.Args[0])
		}
		s := steps[res[1]]
		return fmt.Errorf("spawning %s: system call %d (step %d): %w", cmd.Args[0], s.nr, res[1], unix.Errno(-res[0]))
	}
	p, err := os.FindProcess(int(pid))
	if err != nil {
		unix.Kill(int(pid), unix.SIGKILL)
		return err
	}
	cmd.Process = p
	return nil
}
