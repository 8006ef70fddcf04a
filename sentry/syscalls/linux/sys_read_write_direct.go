package linux

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel"
	"github.com/moat-sandbox/moat/sentry/mm"
)

// Direct reads and writes: for the data of regular files (gofer and tmpfs
// files), read(2) and write(2) hand the file the Sentry's view of the
// memory-file pages behind the application's buffer, pinned (mm.Pin), so
// the data moves once (a gofer file: one pread straight into the pages;
// tmpfs: one copy or pwrite between objects) instead of through a bounce
// buffer. The file sees one call per run of the buffer that is contiguous
// in the memory file, so only files whose reads and writes may be split
// at any byte opt in (directIO); others keep the bounce buffer: records
// (eventfd, timerfd, signalfd, inotify), streams whose reads may wait
// with the pages pinned.

// directChunk bounds how much of the application's buffer one step pins.
const directChunk = 8 << 20

var pinnedPool = sync.Pool{New: func() any { return new(mm.Pinned) }}

// directIO is implemented by files whose reads and writes may be split
// at any byte without changing what they do.
type directIO interface{ DirectIO() }

// direct reports whether reads and writes of f of total bytes go
// straight to the application's memory.
func direct(f *fs.FileDescription, total uint64) bool {
	if total == 0 || f.Options().Stream {
		return false
	}
	_, ok := f.Impl().(directIO)
	return ok
}

// vfsReadDirect is vfsReadFile for direct files.
func vfsReadDirect(t *kernel.Task, f *fs.FileDescription, iovs []iovec, o rwOptions) (uintptr, error) {
	m := t.MemoryManager()
	p := pinnedPool.Get().(*mm.Pinned)
	defer pinnedPool.Put(p)
	var done uint64
	for _, v := range iovs {
		for off := uint64(0); off < v.len; {
			n, perr := m.Pin(p, v.base+uintptr(off), int(min(v.len-off, directChunk)), true)
			for _, b := range p.Blocks {
				var k int
				var err error
				switch {
				case o.pos:
					k, err = f.PRead(t, b, o.off+int64(done))
				case o.noWait || done > 0:
					k, err = f.Read(t, b)
				default:
					k, err = fs.ReadBlocking(t, f, b)
				}
				done += uint64(k)
				if err != nil {
					p.Unpin()
					return vfsPartial(done, vfsIOErr(err))
				}
				if k < len(b) {
					p.Unpin()
					return uintptr(done), nil
				}
			}
			p.Unpin()
			if perr != nil {
				// Linux copies out as it consumes: what the application
				// cannot receive stays in the file.
				if done == 0 {
					return 0, readBadBuffer(t, f, o)
				}
				return uintptr(done), nil
			}
			off += uint64(n)
		}
	}
	return uintptr(done), nil
}

// vfsWriteDirect is vfsWriteFile for direct files, writing at most total
// bytes of iovs.
func vfsWriteDirect(t *kernel.Task, f *fs.FileDescription, iovs []iovec, total uint64, o rwOptions) (uintptr, error) {
	m := t.MemoryManager()
	p := pinnedPool.Get().(*mm.Pinned)
	defer pinnedPool.Put(p)
	var done uint64
	for _, v := range iovs {
		for off := uint64(0); off < v.len && done < total; {
			n, perr := m.Pin(p, v.base+uintptr(off), int(min(v.len-off, directChunk, total-done)), false)
			for _, b := range p.Blocks {
				var k int
				var err error
				switch {
				case o.appendMode > 0:
					k, err = f.WriteAppend(t, b, !o.pos)
				case o.pos:
					k, err = f.PWrite(t, b, o.off+int64(done))
				case o.noWait:
					k, err = f.Write(t, b)
				default:
					k, err = fs.WriteBlocking(t, f, b)
				}
				done += uint64(k)
				if err == unix.EPIPE {
					t.SendSignal(kernel.NewSignalInfo(kernel.Signal(unix.SIGPIPE), kernel.SI_USER))
				}
				if err != nil {
					p.Unpin()
					return vfsPartial(done, vfsIOErr(err))
				}
				if k < len(b) {
					p.Unpin()
					return uintptr(done), nil
				}
			}
			p.Unpin()
			if perr != nil {
				return vfsPartial(done, unix.EFAULT)
			}
			off += uint64(n)
		}
	}
	return uintptr(done), nil
}
