package gofer

// CacheKey names the contents of an open regular file for the memory
// manager's file cache (mm.Cacheable, through the kernel's file mappings):
// the node, while the tree is served read-only and so never changes; nil
// (no sharing) when it is writable.
func (f *regularFile) CacheKey() any {
	if f.node.fs.writable {
		return nil
	}
	return f.node
}

// HostMapFD implements mm.HostMappable: private read-only mappings of a
// file of the read-only tree map its donated descriptor straight into the
// application's stub (its contents never change); -1 when the tree is
// writable.
func (f *regularFile) HostMapFD() int {
	if f.node.fs.writable {
		return -1
	}
	return f.hostFD
}
