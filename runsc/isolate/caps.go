package isolate

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// DropCapabilities leaves every thread of the process with only the
// capabilities in keep: it drops everything else from the bounding set (so
// no execve can bring it back) and sets the effective and permitted sets to
// keep and the inheritable set to nothing, which clears the ambient set
// too (the kernel keeps a capability ambient only while it is both
// permitted and inheritable). It needs CAP_SETPCAP for the bounding set.
//
// Each all-threads call stops the world and waits for every thread to run
// it (about 0.12 ms on a quiet machine, milliseconds on a loaded one), so
// capabilities the bounding set already lacks are skipped (a process
// started from a thread that called LimitBoundingSet makes few calls), and
// the calls run with GOMAXPROCS 1, which halves what each costs (measured
// with the 41 drops of a new user namespace: 5.4 ms with the two Ps of a
// 2-CPU machine, 2.9 ms with one). A process whose sets are keep already
// makes no all-threads call at all.
func DropCapabilities(keep ...uintptr) error {
	keepMask, err := capMask(keep)
	if err != nil {
		return err
	}
	// The set is read on this thread; every thread's set is the same, as
	// this package only changes it on all threads at once
	// (LimitBoundingSet's thread starts processes, it is not one of
	// theirs).
	var drop []uintptr
	for c := uintptr(0); c <= 63; c++ {
		if keepMask&(1<<c) != 0 {
			continue
		}
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil || in != 0 {
			drop = append(drop, c)
		}
	}
	if len(drop) > 1 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	for _, c := range drop {
		err := allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0)
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	// A process started as root, with a bounding set of keep, by a
	// parent with nothing inheritable, has keep as its effective and
	// permitted sets and nothing inheritable, hence nothing ambient: so
	// do all its threads, none having changed them. The check is the
	// calling thread's sets, whoever the parent was.
	if len(drop) == 0 {
		if eff, perm, inh, err := threadCaps(); err == nil && eff == keepMask && perm == keepMask && inh == 0 {
			return nil
		}
	}
	// Inheritable 0 also empties the ambient set on every thread.
	if err := capsetAllThreads(keepMask, keepMask, 0); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// Securebits (capabilities(7), linux/securebits.h; golang.org/x/sys/unix
// does not name them).
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// ClearCapabilities leaves every thread of the process with no capability
// that can ever come back, in two all-threads calls where DropCapabilities
// makes one for each of the forty-odd capabilities of a bounding set (3 to
// 5 ms with the 3 threads of a starting sandbox on these machines). The
// calling process must have set no_new_privs (SetNoNewPrivs) first.
//
// It locks the securebits that undo root's special case: with
// SECBIT_NOROOT an execve by uid 0 grants no capability (without it, root
// gets the whole bounding set), and no ambient capability can be raised;
// then it empties the effective, permitted and inheritable sets (and so
// the ambient set). The bounding set is left as it is: it only limits what
// an execve may grant, and with no_new_privs an execve grants nothing the
// permitted set (now empty) does not hold already (prctl(2),
// PR_SET_NO_NEW_PRIVS), nor does a set-user-ID binary or file capability
// count. capset can only shrink the permitted set. It needs CAP_SETPCAP.
func ClearCapabilities() error {
	bits := uintptr(secbitNoRoot | secbitNoRootLocked | secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked)
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, bits, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("locking the securebits: %w", err)
	}
	if err := capsetAllThreads(0, 0, 0); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// LimitBoundingSet drops every capability not in keep from the bounding
// set of the calling thread only: one cheap prctl each, where
// DropCapabilities stops the world for each. A process the thread then
// starts inherits the smaller set, and a root one keeps no more than it
// across its execve, so its own DropCapabilities has little left to do.
// (A child in a new user namespace starts with a full bounding set in it
// whatever its parent's: this helps only children that stay in the
// caller's user namespace.)
//
// The caller must have locked its goroutine to the thread
// (runtime.LockOSThread) and must never unlock it: the Go runtime then
// ends the thread with the goroutine instead of running other goroutines
// on a thread that lacks capabilities the rest of the process has. It
// needs CAP_SETPCAP; without it nothing changes and the error says so.
func LimitBoundingSet(keep ...uintptr) error {
	keepMask, err := capMask(keep)
	if err != nil {
		return err
	}
	for c := uintptr(0); c <= 63; c++ {
		if keepMask&(1<<c) != 0 {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			return nil // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from this thread's bounding set: %w", c, err)
		}
	}
	return nil
}

// capMask turns a list of capability numbers into a bit mask.
func capMask(caps []uintptr) (uint64, error) {
	var m uint64
	for _, c := range caps {
		if c > 63 {
			return 0, fmt.Errorf("capability %d out of range", c)
		}
		m |= 1 << c
	}
	return m, nil
}

// threadCaps returns the calling thread's effective, permitted and
// inheritable sets.
func threadCaps() (eff, perm, inh uint64, err error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, 0, 0, err
	}
	for i := range data {
		eff |= uint64(data[i].Effective) << (32 * i)
		perm |= uint64(data[i].Permitted) << (32 * i)
		inh |= uint64(data[i].Inheritable) << (32 * i)
	}
	return eff, perm, inh, nil
}
