package isolate

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// The detaching child's arguments: package variables, so that they stay
// put for as long as the child, which shares the caller's memory, reads
// them.
var (
	detachDot   = []byte(".\x00")
	detachRoot  = []byte("/\x00")
	detachEmpty = []byte("\x00")
)

// startDetach starts rawDetach's child with every signal blocked on the
// calling thread (the child inherits the mask and keeps it), and returns
// its pid and where it leaves its results.
func startDetach() (int, *[2]int64, error) {
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	res := new([2]int64)
	// The mask must be put back on the thread it was taken from: a thread
	// left with every signal blocked would never answer the runtime's
	// all-threads calls (AllThreadsSyscall waits for it forever).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old)
	pid, errno := rawDetach(&detachDot[0], &detachRoot[0], &detachEmpty[0], unix.MS_REMOUNT|unix.MS_BIND|rootFlags, res)
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if errno != 0 {
		return 0, nil, unix.Errno(errno)
	}
	return int(pid), res, nil
}

func rawDetach(dot, root, empty *byte, flags uintptr, res *[2]int64) (pid, errno uintptr)
