package kernel

import (
	"encoding/binary"
	"errors"
)

// The amd64 rt_sigframe as Linux builds it:
//
//	frame+0    pretcode (sa_restorer)
//	frame+8    struct ucontext (304 bytes)
//	             +0   uc_flags
//	             +8   uc_link
//	             +16  uc_stack {ss_sp, ss_flags, ss_size}
//	             +40  uc_mcontext (struct sigcontext, 256 bytes)
//	             +296 uc_sigmask
//	frame+312  siginfo (128 bytes)
//
// The xsave area sits above the frame, 64-byte aligned, followed by
// FP_XSTATE_MAGIC2; sigcontext.fpstate points to it. On entry to the
// handler rsp+8 is 16-byte aligned, as after a call.
const (
	frameUCOff     = 8
	frameInfoOff   = 312
	frameSize      = 440
	ucStackOff     = 16
	ucMcontextOff  = 40
	ucSigmaskOff   = 296
	redZone        = 128
	fpXstateMagic2 = 0x46505845

	ucFPXState            = 1
	ucSigcontextSS        = 2
	ucStrictRestoreSS     = 4
	userCS, userSS        = 0x33, 0x2b
	eflagsDF              = 1 << 10
	eflagsTF              = 1 << 8
	eflagsRF              = 1 << 16
	eflagsRestoreMask     = 0x40dd5 // AC|OF|DF|TF|SF|ZF|AF|PF|CF|RF
	trapPageFault         = 14
	trapGeneralProtection = 13
	trapInvalidOpcode     = 6
	trapDivideError       = 0
	trapBreakpoint        = 3
)

// sigcontext field offsets within uc_mcontext, in the kernel's order.
var sigcontextRegs = []func(t *Task) *uint64{
	func(t *Task) *uint64 { return &t.regs.R8 },
	func(t *Task) *uint64 { return &t.regs.R9 },
	func(t *Task) *uint64 { return &t.regs.R10 },
	func(t *Task) *uint64 { return &t.regs.R11 },
	func(t *Task) *uint64 { return &t.regs.R12 },
	func(t *Task) *uint64 { return &t.regs.R13 },
	func(t *Task) *uint64 { return &t.regs.R14 },
	func(t *Task) *uint64 { return &t.regs.R15 },
	func(t *Task) *uint64 { return &t.regs.Rdi },
	func(t *Task) *uint64 { return &t.regs.Rsi },
	func(t *Task) *uint64 { return &t.regs.Rbp },
	func(t *Task) *uint64 { return &t.regs.Rbx },
	func(t *Task) *uint64 { return &t.regs.Rdx },
	func(t *Task) *uint64 { return &t.regs.Rax },
	func(t *Task) *uint64 { return &t.regs.Rcx },
	func(t *Task) *uint64 { return &t.regs.Rsp },
	func(t *Task) *uint64 { return &t.regs.Rip },
	func(t *Task) *uint64 { return &t.regs.Eflags },
}

var errBadFrame = errors.New("bad signal frame")

// setupSignalFrame pushes a signal frame for s and points the registers at
// the handler.
func (t *Task) setupSignalFrame(s Signal, act *SigAction, info *SignalInfo, mask SignalSet, alt SignalStack) error {
	if act.Flags&SA_RESTORER == 0 {
		return errBadFrame
	}
	as, err := t.MemoryManager().AddressSpace()
	if err != nil {
		return err
	}
	// A reset still pending (a handler frame pushed on another before
	// it ran) is the state this frame saves.
	if t.fpInit || t.fpCopy != nil {
		t.applyFPState(as)
	}
	fp, err := t.pctx.FPState(as)
	if err != nil {
		return err
	}
	sp := t.regs.Rsp
	if act.Flags&SA_ONSTACK != 0 && alt.Flags&SS_DISABLE == 0 && alt.Size != 0 && !alt.onStack(sp) {
		sp = alt.Sp + alt.Size
	} else {
		sp -= redZone
	}
	fpAddr := (sp - uint64(len(fp)) - 4) &^ 63
	frame := ((fpAddr - frameSize) &^ 15) - 8

	b := make([]byte, frameSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], act.Restorer)
	uc := b[frameUCOff:]
	le.PutUint64(uc[0:], ucFPXState|ucSigcontextSS|ucStrictRestoreSS)
	le.PutUint64(uc[ucStackOff:], alt.Sp)
	stFlags := uint32(alt.Flags)
	if alt.Size == 0 {
		stFlags = SS_DISABLE
	} else if alt.onStack(t.regs.Rsp) {
		stFlags |= SS_ONSTACK
	}
	le.PutUint32(uc[ucStackOff+8:], stFlags)
	le.PutUint64(uc[ucStackOff+16:], alt.Size)
	mc := uc[ucMcontextOff:]
	for i, r := range sigcontextRegs {
		le.PutUint64(mc[i*8:], *r(t))
	}
	le.PutUint16(mc[144:], userCS)
	le.PutUint16(mc[150:], userSS)
	// trapno (and cr2 and the error code for page faults) as the x86
	// exception that raised the signal.
	switch code := info.Code(); {
	case (s == SIGSEGV || s == SIGBUS) && code > 0 && code != SI_KERNEL:
		le.PutUint64(mc[152:], info.faultErr)
		le.PutUint64(mc[160:], trapPageFault)
		le.PutUint64(mc[176:], le.Uint64(info.Raw[16:24]))
	case s == SIGSEGV && code == SI_KERNEL:
		le.PutUint64(mc[152:], info.faultErr)
		le.PutUint64(mc[160:], trapGeneralProtection)
	case s == SIGILL && code > 0:
		le.PutUint64(mc[160:], trapInvalidOpcode)
	case s == SIGFPE && code > 0:
		le.PutUint64(mc[160:], trapDivideError)
	case s == SIGTRAP && code == SI_KERNEL:
		le.PutUint64(mc[160:], trapBreakpoint)
	}
	le.PutUint64(mc[168:], uint64(mask)) // oldmask
	le.PutUint64(mc[184:], fpAddr)       // fpstate
	le.PutUint64(uc[ucSigmaskOff:], uint64(mask))
	copy(b[frameInfoOff:], info.Raw[:])

	fpBuf := make([]byte, len(fp)+4)
	copy(fpBuf, fp)
	// XSTATE_BV always claims x87 and SSE, as Linux's save_xstate_epilog
	// does, so that a handler's edits of those registers in the frame
	// are restored even when they were in their initial state.
	if len(fp) > 512+8 {
		fpBuf[512] |= 3
	}
	le.PutUint32(fpBuf[len(fp):], fpXstateMagic2)
	if _, err := t.CopyOutBytes(uintptr(fpAddr), fpBuf); err != nil {
		return err
	}
	if _, err := t.CopyOutBytes(uintptr(frame), b); err != nil {
		return err
	}
	t.regs.Rip = act.Handler
	t.regs.Rsp = frame
	t.regs.Rdi = uint64(s)
	t.regs.Rsi = frame + frameInfoOff
	t.regs.Rdx = frame + frameUCOff
	t.regs.Rax = 0
	t.regs.Eflags &^= eflagsDF | eflagsRF | eflagsTF
	t.regs.Cs, t.regs.Ss = userCS, userSS
	// The handler starts from the initial FPU state (MXCSR 0x1f80, x87
	// control word 0x037f), as after Linux's fpu__clear_user_states; the
	// interrupted state is in the frame for rt_sigreturn.
	t.fpInit = true
	return nil
}

// SignalReturn implements rt_sigreturn: it restores the registers, mask,
// alternate stack and FP state saved in the frame at rsp-8.
func (t *Task) SignalReturn() error {
	// A pending restart_syscall now returns EINTR, as Linux's
	// rt_sigreturn makes it.
	t.restartBlock = nil
	uc := uintptr(t.regs.Rsp) // the restorer's ret popped pretcode
	b := make([]byte, frameSize-frameUCOff)
	if _, err := t.CopyInBytes(uc, b); err != nil {
		return err
	}
	le := binary.LittleEndian
	mc := b[ucMcontextOff:]
	eflags := t.regs.Eflags
	for i, r := range sigcontextRegs {
		*r(t) = le.Uint64(mc[i*8:])
	}
	t.regs.Eflags = (eflags &^ eflagsRestoreMask) | (t.regs.Eflags & eflagsRestoreMask)
	// Linux loads CS and SS from the frame (RPL 3); SS is made valid
	// unless uc_flags asks for a strict restore. Any selector but the
	// 64-bit user ones makes the return to user mode fault: SIGSEGV
	// (32-bit code cannot run here, so the compat CS faults too).
	cs, ss := le.Uint16(mc[144:])|3, le.Uint16(mc[150:])|3
	if le.Uint64(b[0:])&ucStrictRestoreSS == 0 {
		ss = userSS
	}
	badSegments := cs != userCS || ss != userSS
	t.regs.Cs, t.regs.Ss = userCS, userSS
	t.regs.Orig_rax = ^uint64(0)
	fpAddr := le.Uint64(mc[184:])
	mask := SignalSet(le.Uint64(b[ucSigmaskOff:]))
	st := SignalStack{
		Sp:    le.Uint64(b[ucStackOff:]),
		Flags: int32(le.Uint32(b[ucStackOff+8:])),
		Size:  le.Uint64(b[ucStackOff+16:]),
	}
	t.k.mu.Lock()
	t.setSignalMaskLocked(mask)
	t.haveSavedMask = false
	if !t.altStack.onStack(t.regs.Rsp) {
		st.Flags &^= SS_ONSTACK
		if st.Flags&SS_DISABLE != 0 {
			st = SignalStack{Flags: SS_DISABLE}
		}
		t.altStack = st
	}
	t.k.mu.Unlock()
	if fpAddr != 0 {
		as, err := t.MemoryManager().AddressSpace()
		if err != nil {
			return err
		}
		cur, err := t.pctx.FPState(as)
		if err != nil {
			return err
		}
		fp := make([]byte, len(cur))
		if _, err := t.CopyInBytes(uintptr(fpAddr), fp); err != nil {
			return err
		}
		// Keep the header's reserved bytes sane: a corrupt xstate_bv
		// makes the host refuse the state, so fall back to the current one.
		if err := t.pctx.SetFPState(as, fp); err != nil {
			t.pctx.SetFPState(as, cur)
		}
	} else {
		// No saved state: the FPU starts afresh, as Linux's
		// fpu__clear_user_states (XMM zero, MXCSR 0x1f80).
		t.fpInit = true
	}
	if badSegments {
		t.ForceSignal(NewSignalInfo(SIGSEGV, SI_KERNEL))
	}
	return nil
}
