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
