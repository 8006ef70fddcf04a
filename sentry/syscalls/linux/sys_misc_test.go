package linux

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// miscEnv is a kernel with tasks that are never run, and a scratch page
// in the first task's address space.
type miscEnv struct {
	t    *testing.T
	k    *kernel.Kernel
	m    *mm.MemoryManager
	task *kernel.Task
	buf  uintptr
}

const scratchLen = 3 * 4096

func newMiscEnv(t *testing.T, c *auth.Credentials) *miscEnv {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	m := mm.New(nil, mf)
	buf, err := m.MMap(mm.MMapOpts{Length: scratchLen, Prot: unix.PROT_READ | unix.PROT_WRITE, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.NewTestKernel(mf)
	return &miscEnv{t: t, k: k, m: m, task: k.NewTestTask(nil, m, c), buf: buf}
}

// child adds a child process of e.task with credentials c.
func (e *miscEnv) child(c *auth.Credentials) *kernel.Task {
	e.m.IncUsers()
	return e.k.NewTestTask(e.task, e.m, c)
}

func args(v ...uintptr) arch.SyscallArguments {
	var a arch.SyscallArguments
	for i, x := range v {
		a[i] = arch.SyscallArgument(x)
	}
	return a
}

// call runs fn on task and fails the test unless it returns want (an
// errno, or nil).
func (e *miscEnv) call(task *kernel.Task, want error, fn kernel.SyscallFn, v ...uintptr) uintptr {
	e.t.Helper()
	r, err := fn(task, args(v...))
	if err != want {
		e.t.Fatalf("got (%d, %v), want error %v", r, err, want)
	}
	return r
}

func (e *miscEnv) read(addr uintptr, n int) []byte {
	e.t.Helper()
	b := make([]byte, n)
	if _, err := e.m.CopyIn(addr, b); err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *miscEnv) write(addr uintptr, b []byte) {
	e.t.Helper()
	if _, err := e.m.CopyOut(addr, b); err != nil {
		e.t.Fatal(err)
	}
}

func (e *miscEnv) u32(addr uintptr) uint32 { return binary.LittleEndian.Uint32(e.read(addr, 4)) }

func le32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func user(uid uint32) *auth.Credentials {
	return &auth.Credentials{
		RealUID: auth.KUID(uid), EffectiveUID: auth.KUID(uid), SavedUID: auth.KUID(uid), FilesystemUID: auth.KUID(uid),
		RealGID: auth.KGID(uid), EffectiveGID: auth.KGID(uid), SavedGID: auth.KGID(uid), FilesystemGID: auth.KGID(uid),
		BoundingCaps: auth.AllCaps,
	}
}

const noPtr = 0

func TestIdentitySyscalls(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	e.call(task, nil, Setresuid, 1000, 2000, 3000)
	e.call(task, nil, Getresuid, e.buf, e.buf+4, e.buf+8)
	if got := e.read(e.buf, 12); !bytes.Equal(got, le32s(1000, 2000, 3000)) {
		t.Fatalf("getresuid wrote %v", got)
	}
	if got := e.call(task, nil, Getuid); got != 1000 {
		t.Fatalf("getuid = %d", got)
	}
	if got := e.call(task, nil, Geteuid); got != 2000 {
		t.Fatalf("geteuid = %d", got)
	}
	e.call(task, unix.EFAULT, Getresuid, e.buf, 8, e.buf)
	// Nothing is root any more: no capability, not dumpable.
	if c := task.Credentials(); c.EffectiveCaps != 0 || c.PermittedCaps != 0 {
		t.Fatalf("capabilities after leaving root: %+v", c)
	}
	if r := e.call(task, nil, Prctl, unix.PR_GET_DUMPABLE); r != 0 {
		t.Fatalf("dumpable = %d after changing the effective uid", r)
	}
	e.call(task, unix.EPERM, Setuid, 5)
	e.call(task, nil, Setuid, 3000)
	if got := e.call(task, nil, Setfsuid, 1000); got != 3000 {
		t.Fatalf("setfsuid returned %d, want the old fsuid 3000", got)
	}
	if got := e.call(task, nil, Setfsuid, uintptr(auth.NoID)); got != 1000 {
		t.Fatalf("setfsuid(-1) returned %d, want 1000", got)
	}
	e.call(task, unix.EPERM, Setgroups, 1, e.buf)
}

func TestGroupsSyscalls(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	e.write(e.buf, le32s(30, 10, 20))
	e.call(task, nil, Setgroups, 3, e.buf)
	if n := e.call(task, nil, Getgroups, 0, noPtr); n != 3 {
		t.Fatalf("getgroups(0) = %d", n)
	}
	e.call(task, unix.EINVAL, Getgroups, 2, e.buf)
	if n := e.call(task, nil, Getgroups, 10, e.buf+64); n != 3 {
		t.Fatalf("getgroups = %d", n)
	}
	if got := e.read(e.buf+64, 12); !bytes.Equal(got, le32s(10, 20, 30)) {
		t.Fatalf("groups %v, want sorted 10 20 30", got)
	}
	e.call(task, unix.EINVAL, Getgroups, uintptr(^uint32(0)), e.buf)
	e.call(task, unix.EINVAL, Setgroups, kernel.NGroupsMax+1, e.buf)
	e.call(task, unix.EFAULT, Setgroups, 2, 8)
	e.call(task, nil, Setgroups, 0, noPtr)
	if n := e.call(task, nil, Getgroups, 0, noPtr); n != 0 {
		t.Fatalf("getgroups after clearing = %d", n)
	}
}

func TestCapgetCapset(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	hdr, data := e.buf, e.buf+64

	// Version probing: unknown version with NULL data succeeds and
	// writes the preferred version.
	e.write(hdr, le32s(0x1234, 0))
	e.call(task, nil, Capget, hdr, noPtr)
	if v := e.u32(hdr); v != capVersion3 {
		t.Fatalf("probe wrote version %#x", v)
	}
	e.write(hdr, le32s(0x1234, 0))
	e.call(task, unix.EINVAL, Capget, hdr, data)
	e.write(hdr, le32s(0x1234, 0))
	e.call(task, unix.EINVAL, Capset, hdr, data)

	e.write(hdr, le32s(capVersion3, 0))
	e.call(task, nil, Capget, hdr, data)
	all := uint64(auth.AllCaps)
	want := le32s(uint32(all), uint32(all), 0, uint32(all>>32), uint32(all>>32), 0)
	if got := e.read(data, 24); !bytes.Equal(got, want) {
		t.Fatalf("capget v3 = %v, want %v", got, want)
	}
	// Version 1 has one 32-bit word per set.
	e.write(data, make([]byte, 24))
	e.write(hdr, le32s(capVersion1, 0))
	e.call(task, nil, Capget, hdr, data)
	if got := e.read(data, 24); !bytes.Equal(got, le32s(uint32(all), uint32(all), 0, 0, 0, 0)) {
		t.Fatalf("capget v1 = %v", got)
	}

	// Drop everything but CAP_SETPCAP from permitted, keep it effective.
	setpcap := uint32(1 << unix.CAP_SETPCAP)
	e.write(hdr, le32s(capVersion3, uint32(task.ThreadID())))
	e.write(data, le32s(setpcap, setpcap, 0, 0, 0, 0))
	e.call(task, nil, Capset, hdr, data)
	if c := task.Credentials(); c.PermittedCaps != auth.CapSet(setpcap) || c.EffectiveCaps != auth.CapSet(setpcap) {
		t.Fatalf("after capset: %+v", c)
	}
	// Permitted cannot grow back.
	e.write(data, le32s(setpcap, setpcap|1, 0, 0, 0, 0))
	e.call(task, unix.EPERM, Capset, hdr, data)

	// Other tasks: capget reads them, capset refuses them.
	child := e.child(user(1000))
	e.write(hdr, le32s(capVersion3, uint32(child.ThreadID())))
	e.call(task, nil, Capget, hdr, data)
	if got := e.read(data, 24); !bytes.Equal(got, make([]byte, 24)) {
		t.Fatalf("capget of an unprivileged child = %v", got)
	}
	e.call(task, unix.EPERM, Capset, hdr, data)
	e.write(hdr, le32s(capVersion3, 99999))
	e.call(task, unix.ESRCH, Capget, hdr, data)
	e.write(hdr, le32s(capVersion3, ^uint32(0)))
	e.call(task, unix.EINVAL, Capget, hdr, data)
}

func TestPrctl(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task

	e.write(e.buf, []byte("a-name-longer-than-fifteen\x00"))
	e.call(task, nil, Prctl, unix.PR_SET_NAME, e.buf)
	e.call(task, nil, Prctl, unix.PR_GET_NAME, e.buf+64)
	if got := e.read(e.buf+64, 16); string(got) != "a-name-longer-t\x00" {
		t.Fatalf("PR_GET_NAME = %q", got)
	}
	// A name ending right before an unmapped page is fine.
	end := e.buf + scratchLen
	e.write(end-3, []byte("ab\x00"))
	e.call(task, nil, Prctl, unix.PR_SET_NAME, end-3)
	if task.Name() != "ab" {
		t.Fatalf("name = %q", task.Name())
	}
	e.write(end-4, []byte("abcd"))
	e.call(task, unix.EFAULT, Prctl, unix.PR_SET_NAME, end-4)

	e.call(task, nil, Prctl, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGUSR1))
	e.call(task, nil, Prctl, unix.PR_GET_PDEATHSIG, e.buf)
	if got := e.u32(e.buf); got != uint32(unix.SIGUSR1) {
		t.Fatalf("PR_GET_PDEATHSIG = %d", got)
	}
	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_PDEATHSIG, 65)

	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_DUMPABLE, 2)
	e.call(task, nil, Prctl, unix.PR_SET_DUMPABLE, 0)
	if r := e.call(task, nil, Prctl, unix.PR_GET_DUMPABLE); r != 0 {
		t.Fatalf("dumpable = %d", r)
	}

	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_NO_NEW_PRIVS, 1, 1)
	e.call(task, nil, Prctl, unix.PR_SET_NO_NEW_PRIVS, 1)
	if r := e.call(task, nil, Prctl, unix.PR_GET_NO_NEW_PRIVS); r != 1 {
		t.Fatalf("no_new_privs = %d", r)
	}

	if r := e.call(task, nil, Prctl, unix.PR_CAPBSET_READ, unix.CAP_SYS_ADMIN); r != 1 {
		t.Fatalf("PR_CAPBSET_READ = %d", r)
	}
	e.call(task, nil, Prctl, unix.PR_CAPBSET_DROP, unix.CAP_SYS_ADMIN)
	if r := e.call(task, nil, Prctl, unix.PR_CAPBSET_READ, unix.CAP_SYS_ADMIN); r != 0 {
		t.Fatalf("PR_CAPBSET_READ after drop = %d", r)
	}
	e.call(task, unix.EINVAL, Prctl, unix.PR_CAPBSET_READ, unix.CAP_LAST_CAP+1)

	e.call(task, unix.EPERM, Prctl, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_KILL)
	e.call(task, unix.EINVAL, Prctl, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 1)

	e.call(task, nil, Prctl, unix.PR_SET_KEEPCAPS, 1)
	if r := e.call(task, nil, Prctl, unix.PR_GET_SECUREBITS); r != secbitKeepCaps {
		t.Fatalf("securebits = %#x", r)
	}
	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_KEEPCAPS, 2)

	if r := e.call(task, nil, Prctl, unix.PR_GET_TIMERSLACK); r != kernel.DefaultTimerSlack {
		t.Fatalf("timer slack = %d", r)
	}
	e.call(task, nil, Prctl, unix.PR_SET_TIMERSLACK, 1000)
	if r := e.call(task, nil, Prctl, unix.PR_GET_TIMERSLACK); r != 1000 {
		t.Fatalf("timer slack = %d", r)
	}

	e.call(task, nil, Prctl, unix.PR_SET_CHILD_SUBREAPER, 1)
	e.call(task, nil, Prctl, unix.PR_GET_CHILD_SUBREAPER, e.buf)
	if got := e.u32(e.buf); got != 1 {
		t.Fatalf("PR_GET_CHILD_SUBREAPER = %d", got)
	}
	if r := e.call(task, nil, Prctl, unix.PR_MCE_KILL_GET); r != unix.PR_MCE_KILL_DEFAULT {
		t.Fatalf("PR_MCE_KILL_GET = %d", r)
	}
	e.call(task, nil, Prctl, unix.PR_MCE_KILL, unix.PR_MCE_KILL_SET, unix.PR_MCE_KILL_EARLY)
	if r := e.call(task, nil, Prctl, unix.PR_MCE_KILL_GET); r != unix.PR_MCE_KILL_EARLY {
		t.Fatalf("PR_MCE_KILL_GET = %d", r)
	}
	e.call(task, nil, Prctl, unix.PR_SET_THP_DISABLE, 1)
	if r := e.call(task, nil, Prctl, unix.PR_GET_THP_DISABLE); r != 1 {
		t.Fatalf("PR_GET_THP_DISABLE = %d", r)
	}
	e.call(task, nil, Prctl, unix.PR_GET_SECCOMP)
	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_SECCOMP, 3) // no such mode
	e.call(task, unix.EPERM, Prctl, unix.PR_SET_MM, unix.PR_SET_MM_BRK, 0)
	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_VMA)
	e.call(task, unix.EINVAL, Prctl, unix.PR_SET_PTRACER, 99999)
	e.call(task, nil, Prctl, unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY)
	e.call(task, unix.EINVAL, Prctl, 9999)
	task.SetClearChildTID(0x1234)
	e.call(task, nil, Prctl, unix.PR_GET_TID_ADDRESS, e.buf)
	if got := binary.LittleEndian.Uint64(e.read(e.buf, 8)); got != 0x1234 {
		t.Fatalf("PR_GET_TID_ADDRESS = %#x", got)
	}
}

func TestSchedSyscalls(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	n := cpuMaskBytes()

	e.write(e.buf, bytes.Repeat([]byte{0xff}, 64))
	if r := e.call(task, nil, SchedGetaffinity, 0, 64, e.buf); int(r) != n {
		t.Fatalf("sched_getaffinity = %d, want %d", r, n)
	}
	if got := e.read(e.buf, n); binary.LittleEndian.Uint64(got) != uint64(kernel.AllCPUs()[0]) {
		t.Fatalf("mask %x", got)
	}
	e.call(task, unix.EINVAL, SchedGetaffinity, 0, 4, e.buf)
	e.call(task, unix.EINVAL, SchedGetaffinity, 0, 12, e.buf)
	e.call(task, unix.ESRCH, SchedGetaffinity, 99999, 8, e.buf)

	e.write(e.buf, []byte{1})
	e.call(task, nil, SchedSetaffinity, 0, 1, e.buf)
	e.call(task, nil, Getcpu, e.buf+16, e.buf+20, noPtr)
	if e.u32(e.buf+16) != 0 || e.u32(e.buf+20) != 0 {
		t.Fatalf("getcpu wrote %d %d", e.u32(e.buf+16), e.u32(e.buf+20))
	}
	e.call(task, nil, Getcpu, noPtr, noPtr, noPtr)
	e.call(task, unix.EFAULT, Getcpu, 8, noPtr, noPtr)
	e.write(e.buf, make([]byte, 8))
	e.call(task, unix.EINVAL, SchedSetaffinity, 0, 8, e.buf)
	e.call(task, unix.EINVAL, SchedSetaffinity, 0, 0, e.buf)

	// Policies.
	e.write(e.buf, le32s(0))
	e.call(task, unix.EINVAL, SchedSetscheduler, 0, unix.SCHED_FIFO, e.buf)
	e.call(task, unix.EINVAL, SchedSetscheduler, 0, 4, e.buf)
	e.call(task, unix.EINVAL, SchedSetscheduler, 0, unix.SCHED_DEADLINE, e.buf)
	e.call(task, unix.EINVAL, SchedSetscheduler, 0, unix.SCHED_NORMAL, noPtr)
	e.write(e.buf, le32s(50))
	e.call(task, unix.EINVAL, SchedSetscheduler, 0, unix.SCHED_NORMAL, e.buf)
	e.call(task, nil, SchedSetscheduler, 0, unix.SCHED_FIFO|unix.SCHED_RESET_ON_FORK, e.buf)
	if r := e.call(task, nil, SchedGetscheduler, 0); r != unix.SCHED_FIFO|unix.SCHED_RESET_ON_FORK {
		t.Fatalf("sched_getscheduler = %#x", r)
	}
	e.write(e.buf, le32s(100))
	e.call(task, unix.EINVAL, SchedSetparam, 0, e.buf)
	e.write(e.buf, le32s(7))
	e.call(task, nil, SchedSetparam, 0, e.buf)
	e.call(task, nil, SchedGetparam, 0, e.buf+8)
	if e.u32(e.buf+8) != 7 {
		t.Fatalf("sched_getparam = %d", e.u32(e.buf+8))
	}
	if r := e.call(task, nil, Prctl, unix.PR_GET_TIMERSLACK); r != 0 {
		t.Fatalf("real-time timer slack = %d", r)
	}
	// sched_getattr on a FIFO task.
	e.call(task, unix.EINVAL, SchedGetattr, 0, e.buf, 47, 0)
	e.call(task, unix.EINVAL, SchedGetattr, 0, e.buf, 56, 1)
	e.write(e.buf, bytes.Repeat([]byte{0xff}, 128))
	e.call(task, nil, SchedGetattr, 0, e.buf, 128, 0)
	got := e.read(e.buf, 60)
	want := (&schedAttr{Size: 56, Policy: unix.SCHED_FIFO, Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: 7}).marshal()
	// The rest of the caller's 128 bytes is zeroed (copy_struct_to_user).
	if !bytes.Equal(got[:56], want) || !bytes.Equal(got[56:], []byte{0, 0, 0, 0}) {
		t.Fatalf("sched_getattr wrote %x, want %x", got, want)
	}
	// A child of a reset-on-fork task is back to SCHED_OTHER.
	child := e.child(auth.NewRootCredentials())
	if r := e.call(child, nil, SchedGetscheduler, 0); r != unix.SCHED_NORMAL {
		t.Fatalf("child policy = %d", r)
	}
	if r := e.call(task, nil, SchedGetscheduler, uintptr(child.ThreadID())); r != unix.SCHED_NORMAL {
		t.Fatalf("child policy by pid = %d", r)
	}

	// sched_setattr: sizes, nice, flags.
	attr := &schedAttr{Size: 20}
	e.write(e.buf, attr.marshal())
	e.call(task, unix.E2BIG, SchedSetattr, 0, e.buf, 0)
	if e.u32(e.buf) != schedAttrSize {
		t.Fatalf("size written back = %d", e.u32(e.buf))
	}
	attr = &schedAttr{Size: 0, Policy: unix.SCHED_NORMAL, Nice: -7}
	e.write(e.buf, attr.marshal())
	e.call(task, nil, SchedSetattr, 0, e.buf, 0)
	if r := e.call(task, nil, Getpriority, unix.PRIO_PROCESS, 0); r != 27 {
		t.Fatalf("getpriority after nice -7 = %d, want 27", r)
	}
	big := append(attr.marshal(), 0, 0, 0, 1)
	binary.LittleEndian.PutUint32(big, uint32(len(big)))
	e.write(e.buf, big)
	e.call(task, unix.E2BIG, SchedSetattr, 0, e.buf, 0)
	attr = &schedAttr{Size: 56, Flags: unix.SCHED_FLAG_UTIL_CLAMP_MIN}
	e.write(e.buf, attr.marshal())
	e.call(task, unix.EOPNOTSUPP, SchedSetattr, 0, e.buf, 0)
	attr = &schedAttr{Size: 48, Policy: unix.SCHED_DEADLINE}
	e.write(e.buf, attr.marshal())
	e.call(task, unix.EINVAL, SchedSetattr, 0, e.buf, 0)

	for _, tc := range []struct {
		fn     kernel.SyscallFn
		policy uintptr
		want   uintptr
		err    error
	}{
		{SchedGetPriorityMax, unix.SCHED_FIFO, 99, nil},
		{SchedGetPriorityMax, unix.SCHED_NORMAL, 0, nil},
		{SchedGetPriorityMax, unix.SCHED_DEADLINE, 0, nil},
		{SchedGetPriorityMax, 4, 0, unix.EINVAL},
		{SchedGetPriorityMin, unix.SCHED_RR, 1, nil},
		{SchedGetPriorityMin, unix.SCHED_IDLE, 0, nil},
	} {
		if r := e.call(task, tc.err, tc.fn, tc.policy); r != tc.want {
			t.Fatalf("priority bound of %d = %d, want %d", tc.policy, r, tc.want)
		}
	}

	e.call(task, nil, SchedRrGetInterval, 0, e.buf)
	if got := e.read(e.buf, 16); !bytes.Equal(got, make([]byte, 16)) {
		t.Fatalf("SCHED_OTHER interval %x", got)
	}
	e.call(task, unix.EINVAL, SchedRrGetInterval, uintptr(^uint32(0)), e.buf)
}

func TestPriorities(t *testing.T) {
	e := newMiscEnv(t, user(1000))
	task := e.task
	// Created first: a child inherits its parent's nice value.
	other := e.child(user(2000))
	if r := e.call(task, nil, Getpriority, unix.PRIO_PROCESS, 0); r != 20 {
		t.Fatalf("getpriority = %d", r)
	}
	e.call(task, nil, Setpriority, unix.PRIO_PROCESS, 0, 5)
	e.call(task, unix.EACCES, Setpriority, unix.PRIO_PROCESS, 0, 4)
	e.call(task, nil, Setpriority, unix.PRIO_PROCESS, 0, 100) // clamped to 19
	if r := e.call(task, nil, Getpriority, unix.PRIO_PROCESS, 0); r != 1 {
		t.Fatalf("getpriority after nice 19 = %d, want 1", r)
	}
	e.call(task, unix.EPERM, Setpriority, unix.PRIO_PROCESS, uintptr(other.ThreadID()), 10)
	e.call(task, unix.ESRCH, Setpriority, unix.PRIO_PROCESS, 99999, 10)
	e.call(task, unix.EINVAL, Setpriority, 3, 0, 10)
	// Both share the process group: the best (lowest nice) wins.
	if r := e.call(task, nil, Getpriority, unix.PRIO_PGRP, 0); r != 20 {
		t.Fatalf("getpriority(PRIO_PGRP) = %d, want 20", r)
	}
	if r := e.call(task, nil, Getpriority, unix.PRIO_USER, 2000); r != 20 {
		t.Fatalf("getpriority(PRIO_USER, 2000) = %d", r)
	}
	e.call(task, unix.ESRCH, Getpriority, unix.PRIO_USER, 4242)

	// I/O priorities.
	if r := e.call(task, nil, IoprioGet, ioprioWhoProcess, 0); r != 0 {
		t.Fatalf("default ioprio = %#x", r)
	}
	e.call(task, unix.EPERM, IoprioSet, ioprioWhoProcess, 0, ioprioClassRT<<13|1)
	e.call(task, unix.EINVAL, IoprioSet, ioprioWhoProcess, 0, ioprioClassNone<<13|1)
	e.call(task, unix.EINVAL, IoprioSet, ioprioWhoProcess, 0, 5<<13)
	e.call(task, unix.EINVAL, IoprioSet, 4, 0, 0)
	e.call(task, nil, IoprioSet, ioprioWhoProcess, 0, ioprioClassBE<<13|7)
	if r := e.call(task, nil, IoprioGet, ioprioWhoProcess, 0); r != ioprioClassBE<<13|7 {
		t.Fatalf("ioprio = %#x", r)
	}
	e.call(task, unix.EPERM, IoprioSet, ioprioWhoProcess, uintptr(other.ThreadID()), ioprioClassIdle<<13)
}

func TestRlimits(t *testing.T) {
	e := newMiscEnv(t, user(1000))
	task := e.task
	e.call(task, nil, Getrlimit, unix.RLIMIT_NOFILE, e.buf)
	if got := e.read(e.buf, 16); binary.LittleEndian.Uint64(got) != 1024 || binary.LittleEndian.Uint64(got[8:]) != 1<<20 {
		t.Fatalf("RLIMIT_NOFILE = %x", got)
	}
	e.call(task, unix.EINVAL, Getrlimit, rlimNLimits, e.buf)
	put := func(cur, max uint64) {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, cur)
		binary.LittleEndian.PutUint64(b[8:], max)
		e.write(e.buf, b)
	}
	put(10, 5)
	e.call(task, unix.EINVAL, Setrlimit, unix.RLIMIT_NOFILE, e.buf)
	put(10, 1<<20+1)
	e.call(task, unix.EPERM, Setrlimit, unix.RLIMIT_NOFILE, e.buf)
	put(1<<20, 1<<20)
	e.call(task, nil, Prlimit64, 0, unix.RLIMIT_NOFILE, e.buf, e.buf+32)
	if got := binary.LittleEndian.Uint64(e.read(e.buf+32, 8)); got != 1024 {
		t.Fatalf("old soft limit = %d", got)
	}
	put(1<<16, 1<<16)
	e.call(task, nil, Setrlimit, unix.RLIMIT_STACK, e.buf)
	put(1<<16, 1<<17)
	e.call(task, unix.EPERM, Setrlimit, unix.RLIMIT_STACK, e.buf)
	if l := task.ThreadGroup().Limits().Get(unix.RLIMIT_STACK); l.Cur != 1<<16 || l.Max != 1<<16 {
		t.Fatalf("RLIMIT_STACK = %+v", l)
	}
	other := e.child(user(2000))
	e.call(task, unix.EPERM, Prlimit64, uintptr(other.ThreadID()), unix.RLIMIT_NOFILE, noPtr, e.buf)
	e.call(task, unix.ESRCH, Prlimit64, 99999, unix.RLIMIT_NOFILE, noPtr, e.buf)
	same := e.child(user(1000))
	e.call(task, nil, Prlimit64, uintptr(same.ThreadID()), unix.RLIMIT_NOFILE, noPtr, e.buf)
	e.call(task, unix.EFAULT, Prlimit64, 0, unix.RLIMIT_NOFILE, 8, noPtr)
}

func TestUTSAndPersonality(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	e.write(e.buf, []byte("sandbox-host"))
	e.call(task, nil, Sethostname, e.buf, 7)
	e.call(task, unix.EINVAL, Sethostname, e.buf, 65)
	e.call(task, unix.EINVAL, Sethostname, e.buf, uintptr(^uint32(0)))
	e.call(task, nil, Setdomainname, e.buf, 12)
	e.call(task, nil, Uname, e.buf+1024)
	u := e.read(e.buf+1024, 6*65)
	field := func(i int) string { return strings.TrimRight(string(u[i*65:(i+1)*65]), "\x00") }
	for i, want := range []string{"Linux", "sandbox", UnameRelease, UnameVersion, "x86_64", "sandbox-host"} {
		if got := field(i); got != want {
			t.Fatalf("uname field %d = %q, want %q", i, got, want)
		}
	}
	e.call(task, unix.EFAULT, Uname, 8)
	unpriv := e.child(user(1000))
	e.call(unpriv, unix.EPERM, Sethostname, e.buf, 65)

	if r := e.call(task, nil, Personality, 0xffffffff); r != 0 {
		t.Fatalf("personality = %#x", r)
	}
	if r := e.call(task, nil, Personality, 0x0040000); r != 0 {
		t.Fatalf("old personality = %#x", r)
	}
	if r := e.call(task, nil, Personality, 0xffffffff); r != 0x0040000 {
		t.Fatalf("personality = %#x", r)
	}
}

func TestGetrandomAndSysinfo(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	task := e.task
	e.call(task, unix.EINVAL, Getrandom, e.buf, 8, 8)
	e.call(task, unix.EINVAL, Getrandom, e.buf, 8, unix.GRND_INSECURE|unix.GRND_RANDOM)
	e.call(task, unix.EFAULT, Getrandom, 8, 8, 0)
	if r := e.call(task, nil, Getrandom, 8, 0, 0); r != 0 {
		t.Fatalf("getrandom of 0 bytes = %d", r)
	}
	if r := e.call(task, nil, Getrandom, e.buf, 5000, unix.GRND_NONBLOCK); r != 5000 {
		t.Fatalf("getrandom = %d", r)
	}
	if bytes.Equal(e.read(e.buf, 64), make([]byte, 64)) {
		t.Fatal("getrandom wrote zeros")
	}
	// A buffer running into an unmapped page: partial count.
	end := e.buf + scratchLen
	if r := e.call(task, nil, Getrandom, end-100, 5000, 0); r != 100 {
		t.Fatalf("getrandom across the end = %d, want 100", r)
	}

	e.child(auth.NewRootCredentials())
	e.call(task, nil, Sysinfo, e.buf)
	b := e.read(e.buf, sysinfoSize)
	if up := binary.LittleEndian.Uint64(b); up < 1 || up > 60 {
		t.Fatalf("uptime = %d, want a second or a few (rounded up)", up)
	}
	total, free := binary.LittleEndian.Uint64(b[32:]), binary.LittleEndian.Uint64(b[40:])
	if total != SandboxMemory || free > total || free == 0 {
		t.Fatalf("total %d free %d", total, free)
	}
	if procs := binary.LittleEndian.Uint16(b[80:]); procs != 2 {
		t.Fatalf("procs = %d, want 2", procs)
	}
	if unit := binary.LittleEndian.Uint32(b[104:]); unit != 1 {
		t.Fatalf("mem_unit = %d", unit)
	}
}

func TestSessionSyscalls(t *testing.T) {
	e := newMiscEnv(t, auth.NewRootCredentials())
	leader := e.task
	id := uintptr(leader.ThreadID())
	if r := e.call(leader, nil, Getsid, 0); r != id {
		t.Fatalf("getsid = %d", r)
	}
	e.call(leader, unix.EPERM, Setsid)
	e.call(leader, unix.EPERM, Setpgid, 0, 0) // a session leader
	child := e.child(auth.NewRootCredentials())
	cid := uintptr(child.ThreadID())
	if r := e.call(leader, nil, Getpgid, cid); r != id {
		t.Fatalf("child's pgid = %d, want %d", r, id)
	}
	e.call(leader, unix.EINVAL, Setpgid, cid, uintptr(^uint32(0)))
	e.call(leader, unix.ESRCH, Setpgid, 99999, 0)
	e.call(leader, nil, Setpgid, cid, 0)
	if r := e.call(child, nil, Getpgrp); r != cid {
		t.Fatalf("getpgrp after setpgid = %d", r)
	}
	e.call(leader, nil, Setpgid, cid, id)
	e.call(leader, unix.EPERM, Setpgid, cid, 4242) // no such group
	if r := e.call(child, nil, Setsid); r != cid {
		t.Fatalf("setsid = %d", r)
	}
	if r := e.call(leader, nil, Getsid, cid); r != cid {
		t.Fatalf("child's sid = %d", r)
	}
	e.call(leader, unix.EPERM, Setpgid, cid, 0) // other session
	e.call(child, unix.ESRCH, Setpgid, id, 0)   // not a child
	e.call(leader, unix.ESRCH, Getsid, 99999)
	e.call(leader, unix.ESRCH, Getpgid, uintptr(^uint32(0)))
}
