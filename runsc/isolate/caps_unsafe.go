package isolate

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// capsetAllThreads sets the effective, permitted and inheritable sets of
// every thread.
func capsetAllThreads(eff, perm, inh uint64) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for i := range data {
		data[i] = unix.CapUserData{
			Effective:   uint32(eff >> (32 * i)),
			Permitted:   uint32(perm >> (32 * i)),
			Inheritable: uint32(inh >> (32 * i)),
		}
	}
	err := allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0, 0, 0, 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	return err
}
