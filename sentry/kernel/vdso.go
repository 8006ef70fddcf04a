package kernel

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/hostrand"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/vdso"
)

// vdsoUpdateInterval is how often the vDSO's time parameters are refreshed.
const vdsoUpdateInterval = 50 * time.Millisecond

// setupVDSO copies the vDSO image and its data page into the memory file
// once; every address space maps the same pages.
func (k *Kernel) setupVDSO() error {
	img := vdso.Image
	off, err := k.MemFile.Allocate(uint64(vdso.VVarSize + len(img)))
	if err != nil {
		return fmt.Errorf("allocating the vDSO: %w", err)
	}
	k.vvarOff = off
	k.vdsoOff = off + vdso.VVarSize
	k.vdsoLen = uintptr(len(img))
	copy(k.MemFile.Bytes(k.vdsoOff, uint64(len(img))), img)
	vvar := k.MemFile.Bytes(k.vvarOff, vdso.VVarSize)
	k.Clock.Update(vvar)
	go func() {
		tick := time.NewTicker(vdsoUpdateInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				k.Clock.Update(vvar)
			case <-k.stopClock:
				return
			}
		}
	}()
	return nil
}

// mapVDSO maps the data page and the vDSO into m and returns the vDSO's
// address.
func (k *Kernel) mapVDSO(m *mm.MemoryManager) (uintptr, error) {
	size := vdso.VVarSize + k.vdsoLen
	addr, err := m.FindGap(0, size)
	if err != nil {
		return 0, err
	}
	if err := m.MapFixedRange(addr, vdso.VVarSize, k.vvarOff, unix.PROT_READ, "[vvar]"); err != nil {
		return 0, err
	}
	base := addr + vdso.VVarSize
	if err := m.MapFixedRange(base, k.vdsoLen, k.vdsoOff, unix.PROT_READ|unix.PROT_EXEC, "[vdso]"); err != nil {
		return 0, err
	}
	return base, nil
}

// randomBytes fills b from the Sentry's own random source.
func randomBytes(b []byte) {
	hostrand.Read(b)
}

// hwcap returns AT_HWCAP: the CPUID leaf 1 EDX bits, as Linux reports.
func hwcap() uint64 { return uint64(cpuidEDX1()) }
