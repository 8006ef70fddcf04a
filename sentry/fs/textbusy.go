package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Text-busy accounting (ETXTBSY), as Linux's i_writecount: a regular
// file open for writing cannot be executed, and a file being executed
// (the main executable of a live address space, or any file an execve
// is loading) cannot be opened for writing or truncated. Nodes are named
// by their file system and inode number; textMu guards the table.

type textKey struct {
	fs  *Filesystem
	ino uint64
}

var (
	textMu sync.Mutex
	// textCount is Linux's i_writecount per node: > 0 counts writers,
	// < 0 counts executions; absent means 0.
	textCount = make(map[textKey]int)
)

func textKeyOf(d *Dentry, st *Stat) textKey { return textKey{d.fs, st.Ino} }

// getWriteAccess counts a writer of k, ETXTBSY while k is executed.
func getWriteAccess(k textKey) error {
	textMu.Lock()
	defer textMu.Unlock()
	if textCount[k] < 0 {
		return unix.ETXTBSY
	}
	textCount[k]++
	return nil
}

// addText adds delta to k's count, dropping zero entries.
func addText(k textKey, delta int) {
	textMu.Lock()
	defer textMu.Unlock()
	if n := textCount[k] + delta; n != 0 {
		textCount[k] = n
	} else {
		delete(textCount, k)
	}
}

// writeAccessHook is the release hook key of a file counted as a writer.
type writeAccessHook struct{}

// checkWriteAccess gives ETXTBSY if the node at d (attributes st) is
// being executed: truncate(2) by name.
func checkWriteAccess(d *Dentry, st *Stat) error {
	if !st.IsRegular() {
		return nil
	}
	textMu.Lock()
	defer textMu.Unlock()
	if textCount[textKeyOf(d, st)] < 0 {
		return unix.ETXTBSY
	}
	return nil
}

// WriteDenial is one hold of a node against writers (DenyWriteAccess).
type WriteDenial struct {
	k    textKey
	none bool // not a regular file: nothing is held
	once sync.Once
}

// Release lifts the denial; later calls do nothing.
func (d *WriteDenial) Release() {
	d.once.Do(func() {
		if !d.none {
			addText(d.k, 1)
		}
	})
}

// Dup returns another denial of the same node (a forked address space
// keeps executing what its parent does), which never fails: d already
// keeps writers out.
func (d *WriteDenial) Dup() *WriteDenial {
	if !d.none {
		addText(d.k, -1)
	}
	return &WriteDenial{k: d.k, none: d.none}
}

// DenyWriteAccess marks the regular file at vd as being executed (Linux's
// deny_write_access): ETXTBSY if it is open for writing; otherwise opens
// for writing and truncation give ETXTBSY until the denial is released.
func DenyWriteAccess(ctx Context, vd VirtualDentry) (*WriteDenial, error) {
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if !st.IsRegular() {
		return &WriteDenial{none: true}, nil
	}
	k := textKeyOf(vd.Dentry, &st)
	textMu.Lock()
	defer textMu.Unlock()
	if textCount[k] > 0 {
		return nil, unix.ETXTBSY
	}
	textCount[k]--
	return &WriteDenial{k: k}, nil
}
