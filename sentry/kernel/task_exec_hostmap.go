package kernel

import "github.com/moat-sandbox/moat/sentry/mm"

// HostMapFD implements mm.HostMappable for files whose implementation
// offers a host descriptor of unchanging contents (the gofer's read-only
// tree): the stubs map it directly instead of faulting its pages into the
// memory file.
func (f *execFile) HostMapFD() int {
	if h, ok := f.fd.Impl().(mm.HostMappable); ok {
		return h.HostMapFD()
	}
	return -1
}
