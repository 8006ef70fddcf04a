package proc

import (
	"sync"

	"github.com/moat-sandbox/moat/sentry/fs"
)

// nodeCache keeps the node built for each live process, thread or
// descriptor, so inode numbers stay the same from one lookup to the next,
// as Linux's do. An entry is rebuilt when its id names another object
// (key) or the owner of the files changed: it is fixed when they are
// built.
type nodeCache struct {
	mu sync.Mutex
	m  map[int32]cachedNode
}

type cachedNode struct {
	key   any // comparable: the kernel's task values and file pointers are
	owner owner
	node  fs.Node
}

// maxCached is how many entries the cache holds before it drops those of
// ids that no longer name a task.
const maxCached = 1024

// get returns the node of object key (id) owned by o, building it if
// needed. live reports whether an id still names an object, for pruning.
func (c *nodeCache) get(id int32, key any, o owner, build func() fs.Node, live func(int32) bool) fs.Node {
	c.mu.Lock()
	if e, ok := c.m[id]; ok && e.key == key && e.owner == o {
		c.mu.Unlock()
		return e.node
	}
	c.mu.Unlock()
	n := build()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[int32]cachedNode)
	}
	if len(c.m) >= maxCached {
		for k := range c.m {
			if !live(k) {
				delete(c.m, k)
			}
		}
	}
	c.m[id] = cachedNode{key: key, owner: o, node: n}
	return n
}

// keep drops every entry whose id is not in ids (sorted or not).
func (c *nodeCache) keep(ids []int32) {
	set := make(map[int32]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	c.mu.Lock()
	for k := range c.m {
		if !set[k] {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}
