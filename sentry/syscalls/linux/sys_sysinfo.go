package linux

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/arch"
	"github.com/moat-sandbox/moat/sentry/kernel"
)

// SandboxMemory is the memory sysinfo(2) reports as total, in bytes. It
// starts as the host's (read when the Sentry starts, before it confines
// itself); boot may lower it to the container's memory limit before the
// first task runs.
var SandboxMemory = hostMemory()

// hostMemory returns the host's RAM, or 4 GiB if it cannot be read.
func hostMemory() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 4 << 30
	}
	return si.Totalram * uint64(si.Unit)
}

// sysinfoSize is sizeof(struct sysinfo) on amd64.
const sysinfoSize = 112

// Sysinfo implements sysinfo(2): uptime from CLOCK_BOOTTIME, memory
// as the sandbox sees it (free is what the memory file has not handed
// out), no swap, and the number of tasks. Load averages are 0.
func Sysinfo(t *kernel.Task, a arch.SyscallArguments) (uintptr, error) {
	k := t.Kernel()
	// Uptime is CLOCK_BOOTTIME, as on Linux: the time since the boot it
	// counts from, as /proc/uptime shows it.
	up := time.Since(k.BootTime())
	// Linux rounds the uptime up to a whole second.
	secs := uint64(up / time.Second)
	if up%time.Second != 0 {
		secs++
	}
	total := SandboxMemory
	var free uint64
	if used := k.MemFile.Used(); used < total {
		free = total - used
	}
	procs := 0
	for _, tg := range k.ThreadGroups() {
		procs += len(tg.Tasks())
	}
	b := make([]byte, sysinfoSize)
	putLE64(b[0:], secs)
	// loads[3] at 8, 16, 24 stay 0.
	putLE64(b[32:], total)
	putLE64(b[40:], free)
	// sharedram, bufferram, totalswap, freeswap at 48..79 stay 0.
	procs = min(procs, 0xffff)
	b[80], b[81] = byte(procs), byte(procs>>8)
	// totalhigh, freehigh at 88, 96 stay 0.
	putLE32(b[104:], 1) // mem_unit
	if _, err := t.CopyOutBytes(a[0].Pointer(), b); err != nil {
		return 0, unix.EFAULT
	}
	return 0, nil
}
