package arch

// The application address-space layout. The ptrace platform keeps its stub
// code above MaxUserAddress, so application mappings stay below it.
const (
	// PageSize is the size of a page.
	PageSize = 4096
	// MinUserAddress is the lowest address an application may map
	// (vm.mmap_min_addr).
	MinUserAddress = 0x10000
	// MaxUserAddress is one past the highest application address.
	MaxUserAddress = 0x7fff_0000_0000
	// StackTop is one past the top of the initial stack (before any
	// randomisation the loader applies).
	StackTop = 0x7ffe_ffff_0000
	// DefaultStackSize is the initial size of the main stack mapping; it
	// grows down on faults up to RLIMIT_STACK.
	DefaultStackSize = 128 << 10
	// MmapBase is where top-down mmap allocation starts (below the stack
	// and its maximal growth).
	MmapBase = 0x7ffd_0000_0000
	// PIELoadBase is where a position-independent main executable is
	// loaded (ELF_ET_DYN_BASE: two thirds of the 47-bit space).
	PIELoadBase = 0x5555_5555_4000
)
