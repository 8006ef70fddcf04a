package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform"
)

// The x86 page-fault error code, which a signal handler reads as
// sigcontext.err. The host kernel knows it but ptrace does not report it,
// so the Sentry works it out:
//
//   - U (user) is always set: application code faults in user mode.
//   - I (instruction fetch): the fault address is the start of the
//     instruction, or within its 15 bytes on a page the application may not
//     execute (the CPU fetches before it accesses data).
//   - W (write): a data access to a page the application may read (any
//     protection but PROT_NONE is readable on amd64) faults only if it
//     writes. Where nothing readable is mapped (no vma, PROT_NONE, a file
//     page past EOF) the Sentry replays the instruction in a scratch address
//     space holding copies of the pages it touches and a read-only zero page
//     at the fault address, with the trap flag set: it faults there again
//     only if the access writes (read-modify-write instructions included,
//     as the CPU reports them). The replay touches copies only, so the
//     application sees no side effect.
//   - P (protection violation on a present page): set for faults on pages
//     the application has mapped with some access, unless the Sentry mapped
//     the page for this very access (fresh: it was not present before);
//     clear for unmapped and PROT_NONE pages (whose page-table entries are
//     not present) and for file pages past EOF.
//
// The replay needs a page at the fault address: below the host's
// vm.mmap_min_addr (page 0 at least) none can be mapped, and such an
// access is reported as a read.
const (
	pfProtection = 1 << 0
	pfWrite      = 1 << 1
	pfUser       = 1 << 2
	pfInstrFetch = 1 << 4

	// maxInsnLen is the longest amd64 instruction.
	maxInsnLen = 15
	// probeSteps bounds the replay: each step maps one more page the
	// instruction touches.
	probeSteps = 32
)

// pageFaultErrorCode returns the error code for the fault at addr that is
// delivered as sig (SIGSEGV or SIGBUS), t.regs being the registers at the
// faulting instruction; fresh says the Sentry mapped the page for this
// access.
func (t *Task) pageFaultErrorCode(m *mm.MemoryManager, addr uintptr, sig Signal, fresh bool) uint64 {
	code := uint64(pfUser)
	prot, mapped := m.Protection(addr)
	readable := mapped && prot != 0 && sig == SIGSEGV
	if readable && !fresh {
		code |= pfProtection
	}
	rip := uintptr(t.regs.Rip)
	if addr >= rip && addr-rip < maxInsnLen && (!readable || prot&unix.PROT_EXEC == 0) {
		return code | pfInstrFetch
	}
	if readable {
		return code | pfWrite
	}
	if t.replayWrites(m, addr) {
		code |= pfWrite
	}
	return code
}

// faultReplay is a task's scratch address space and context for replays,
// kept from one fault to the next (only the task goroutine uses it) and
// emptied after each replay.
type faultReplay struct {
	as  platform.AddressSpace
	ctx platform.Context
}

// releaseFaultReplay frees the task's replay space, if any.
func (t *Task) releaseFaultReplay() {
	if r := t.replay; r != nil {
		r.ctx.Release()
		r.as.Release()
		t.replay = nil
	}
}

// replayWrites runs the faulting instruction once more in a scratch address
// space (see above) and reports whether its access at addr is a write. When
// the replay cannot be done it reports false (a read).
func (t *Task) replayWrites(m *mm.MemoryManager, addr uintptr) bool {
	k := t.k
	realAS, err := m.AddressSpace()
	if err != nil {
		return false
	}
	if t.replay == nil {
		as, err := k.Platform.NewAddressSpace()
		if err != nil {
			k.Log.Debug("fault replay: no address space", "err", err)
			return false
		}
		t.replay = &faultReplay{as: as, ctx: k.Platform.NewContext()}
	}
	as, ctx := t.replay.as, t.replay.ctx

	mf := k.MemFile
	var pages []uint64
	var mapped []uintptr
	broken := false
	defer func() {
		for _, a := range mapped {
			if err := as.Unmap(a, arch.PageSize); err != nil {
				broken = true
			}
		}
		for _, off := range pages {
			mf.DecRef(off, arch.PageSize)
		}
		if broken {
			t.releaseFaultReplay()
		}
	}()
	newPage := func() (uint64, error) {
		off, err := mf.Allocate(arch.PageSize)
		if err == nil {
			pages = append(pages, off)
		}
		return off, err
	}

	target := addr &^ (arch.PageSize - 1)
	zero, err := newPage()
	if err != nil {
		return false
	}
	if err := as.MapFile(target, zero, arch.PageSize, platform.Read); err != nil {
		return false
	}
	mapped = append(mapped, target)
	if fp, err := t.pctx.FPState(realAS); err == nil {
		ctx.SetFPState(as, fp)
	}
	regs := t.regs
	regs.Eflags |= eflagsTF
	copied := map[uintptr]bool{target: true}
	for step := 0; step < probeSteps; step++ {
		res, info, err := ctx.Switch(as, &regs)
		if err != nil {
			k.Log.Debug("fault replay failed", "err", err)
			broken = true
			return false
		}
		switch res {
		case platform.SwitchInterrupted:
			continue
		case platform.SwitchSyscall:
			return false
		}
		if info.Signo != int32(SIGSEGV) || (info.Code != mm.SEGV_MAPERR && info.Code != mm.SEGV_ACCERR) {
			// The single-step trap, or another fault after the access
			// at addr: that access read.
			return false
		}
		page := uintptr(info.Addr) &^ (arch.PageSize - 1)
		if page == target {
			return true
		}
		if copied[page] {
			// An access the application could not make either, after
			// the one at addr.
			return false
		}
		copied[page] = true
		off, err := newPage()
		if err != nil {
			return false
		}
		if _, err := m.CopyIn(page, mf.Bytes(off, arch.PageSize)); err != nil {
			// Inaccessible to the application: this access comes after
			// the one at addr (or the real run would have faulted here).
			return false
		}
		if err := as.MapFile(page, off, arch.PageSize, platform.Read|platform.Write|platform.Exec); err != nil {
			return false
		}
		mapped = append(mapped, page)
	}
	return false
}

// gpErrorCode is the error code of the general-protection fault at the
// task's RIP, which the host does not pass on: "int n" through a gate the
// application may not use reports the gate (n*8+2: IDT, external 0), as
// the CPU does; other faults (privileged instructions, misaligned SSE)
// report 0.
func (t *Task) gpErrorCode() uint64 {
	var insn [2]byte
	if n, _ := t.CopyInBytes(uintptr(t.regs.Rip), insn[:]); n == 2 && insn[0] == 0xcd {
		return uint64(insn[1])*8 + 2
	}
	return 0
}
