package loader

import "debug/elf"

// elfMachine is the only e_machine this loader accepts.
const elfMachine = elf.EM_X86_64

// platform is the AT_PLATFORM string Linux reports on x86-64
// (ELF_PLATFORM, the machine name of uname(2)).
const platform = "x86_64"

// archAuxv returns the entries Linux's ARCH_DLINFO puts first in the
// auxiliary vector on x86-64: the vDSO (when there is one) and the
// minimal signal stack size.
func archAuxv(args *Args) []AuxEntry {
	var aux []AuxEntry
	if args.VDSOBase != 0 {
		aux = append(aux, AuxEntry{AT_SYSINFO_EHDR, uint64(args.VDSOBase)})
	}
	if args.MinSigStackSize != 0 {
		aux = append(aux, AuxEntry{AT_MINSIGSTKSZ, args.MinSigStackSize})
	}
	return aux
}
