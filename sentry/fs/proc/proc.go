// Package proc is /proc, driven by the kernel through the Kernel and Task
// interfaces and the optional interfaces a task or kernel may implement.
//
// Root: /proc/self, thread-self, mounts (-> self/mounts), filesystems, a
// directory per process, and, when the kernel implements System, cpuinfo,
// meminfo, stat, uptime, loadavg, version, vmstat, swaps, partitions,
// diskstats, cmdline and sys/ (system.go).
//
// Per process: exe, cwd, root, fd/, fdinfo/, cmdline, comm (writable by
// the process itself), mounts, mountinfo, cgroup, uid_map, gid_map, ns/
// (ns.go), setgroups, loginuid, sessionid, wchan, coredump_filter, and
// from optional interfaces: stat and status (StatTask); environ, auxv,
// maps, smaps, smaps_rollup and statm (MemTask, ResidentTask); mem
// (MemAccessTask, mem.go); limits (LimitsTask); oom_score_adj (OOMTask);
// personality (PersonalityTask); timerslack_ns (TimerSlackTask); task/
// (ThreadsTask). A non-dumpable process's files belong to root
// (DumpableTask). Only the sandbox's processes ever appear.
//
// The calling task is known through the Context: it must implement
// ProcContext. Every directory here is dynamic: lookups are never cached
// by the VFS and exited processes vanish at once. Each process's directory
// is kept while the process lives so its inode numbers stay stable
// (cache.go). Locks: nodeCache.mu, a leaf.
package proc

import (
	"fmt"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

// ProcSuperMagic is statfs's f_type for /proc.
const ProcSuperMagic = 0x9fa0

// ProcContext is implemented by contexts that know the calling task's
// thread group (its pid as the caller's PID namespace sees it).
type ProcContext interface {
	ThreadGroupID() int32
}

// ThreadContext is implemented by contexts that know the calling thread's
// id (for /proc/thread-self).
type ThreadContext interface {
	ProcThreadID() int32
}

// SelfKernel is implemented by kernels whose /proc may number processes
// in a PID namespace other than the reader's: SelfIDs returns the
// reader's process and thread ids as the /proc numbers them, false if it
// is not visible there (/proc/self is then ENOENT).
type SelfKernel interface {
	SelfIDs(ctx fs.Context) (tgid, tid int32, ok bool)
}

// selfIDs returns the ids /proc/self and /proc/thread-self name.
func selfIDs(k Kernel, ctx fs.Context) (tgid, tid int32, ok bool) {
	if sk, isSK := k.(SelfKernel); isSK {
		return sk.SelfIDs(ctx)
	}
	pc, isPC := ctx.(ProcContext)
	if !isPC {
		return 0, 0, false
	}
	tgid = pc.ThreadGroupID()
	tid = tgid
	if tc, isTC := ctx.(ThreadContext); isTC {
		tid = tc.ProcThreadID()
	}
	return tgid, tid, true
}

// FSContexter is implemented by contexts that have a file system context:
// links are shown relative to the caller's root, as Linux does.
type FSContexter interface {
	FSContext() *fs.FSContext
}

// Kernel is what /proc asks the kernel.
type Kernel interface {
	// ThreadGroup returns the process pid (as ctx's PID namespace sees it).
	ThreadGroup(ctx fs.Context, pid int32) (Task, bool)
	// PIDs lists the processes ctx can see.
	PIDs(ctx fs.Context) []int32
}

// Task is one process as /proc shows it.
type Task interface {
	// PID is the process id.
	PID() int32
	// Credentials are the process's credentials (its files are owned by
	// the effective ids).
	Credentials() *auth.Credentials
	// Exe is the executable; false if the process has none (exited).
	Exe() (fs.VirtualDentry, bool)
	// FDTable is the descriptor table; nil once the process exited.
	FDTable() *fs.FDTable
	// FSContext is the root and cwd; nil once the process exited.
	FSContext() *fs.FSContext
	// Cmdline is the argument area: the arguments, each NUL-terminated.
	Cmdline() []byte
	// Comm is the command name (at most 15 bytes).
	Comm() string
}

// DumpableTask is implemented by processes that can be made
// non-dumpable (PR_SET_DUMPABLE, exec of a set-user-ID program).
type DumpableTask interface {
	Dumpable() bool
}

// MMUserNSTask is implemented by processes whose address space belongs
// to a user namespace (the one of their last execve: Linux's
// mm->user_ns), whose root owns their files while they are not dumpable.
type MMUserNSTask interface {
	MMUserNamespace() *auth.UserNamespace
}

// owner is who owns a process's files.
type owner struct {
	uid      auth.KUID
	gid      auth.KGID
	dumpable bool
	// rootUID and rootGID own the files of a non-dumpable process: the
	// root of its address space's user namespace, or the global root
	// where that is unmapped (Linux's task_dump_owner).
	rootUID auth.KUID
	rootGID auth.KGID
}

func ownerOf(t Task) owner {
	c := t.Credentials()
	o := owner{uid: c.EffectiveUID, gid: c.EffectiveGID, dumpable: true}
	if d, ok := t.(DumpableTask); ok {
		o.dumpable = d.Dumpable()
	}
	if mt, ok := t.(MMUserNSTask); ok && !o.dumpable {
		ns := mt.MMUserNamespace()
		if k, ok := ns.MapToKUID(0); ok {
			o.rootUID = k
		}
		if k, ok := ns.MapToKGID(0); ok {
			o.rootGID = k
		}
	}
	return o
}

// attr returns the attributes of a file or directory with permission
// bits mode: owned by the effective ids, or by root (of the user
// namespace the process's address space belongs to) once the process is
// not dumpable, so that its memory and descriptors are not open to its
// user. World-readable-and-searchable directories keep the effective
// owner, which tools read by stat (Linux's task_dump_owner).
func (o owner) attr(mode uint32, dir bool) synth.Attr {
	if !o.dumpable && !(dir && mode == 0o555) {
		return synth.Attr{Mode: mode, UID: o.rootUID, GID: o.rootGID}
	}
	return synth.Attr{Mode: mode, UID: o.uid, GID: o.gid}
}

// StatTask is implemented by tasks that provide /proc/[pid]/stat and
// status contents.
type StatTask interface {
	// StatText is the stat line; without addresses (a reader that fails
	// the ptrace access check), the code, stack, data, brk, argument and
	// environment addresses read as Linux shows them then (startcode and
	// endcode 1, the others 0).
	StatText(addresses bool) string
	StatusText() string
}

// StatusForTask is implemented by tasks whose status shows ids as the
// reader's user namespace sees them.
type StatusForTask interface {
	StatusTextFor(reader *auth.UserNamespace) string
}

// UserNSTask is implemented by tasks that can be in a user namespace
// other than the sandbox's.
type UserNSTask interface {
	UserNamespace() *auth.UserNamespace
}

// taskUserNS returns t's user namespace (nil: the initial one).
func taskUserNS(t Task) *auth.UserNamespace {
	if ut, ok := t.(UserNSTask); ok {
		return ut.UserNamespace()
	}
	return nil
}

// readerUserNS returns the user namespace of ctx's credentials.
func readerUserNS(ctx fs.Context) *auth.UserNamespace {
	if c := ctx.Credentials(); c != nil {
		return c.UserNamespace
	}
	return nil
}

// FDInfoer is implemented by file implementations that add lines to
// /proc/[pid]/fdinfo/N after pos, flags and mnt_id (eventfd's
// "eventfd-count:", epoll's "tfd:" lines...), each ending in a newline.
type FDInfoer interface {
	FDInfo() string
}

// ThreadsTask is implemented by processes that list their threads in
// /proc/[pid]/task. Each thread is shown as a Task (its stat and status are
// the thread's own); a thread's directory has no task directory itself.
type ThreadsTask interface {
	// TIDs lists the live threads' ids, sorted.
	TIDs() []int32
	// Thread returns the thread tid of this process.
	Thread(tid int32) (Task, bool)
}

// New returns /proc with extra as additional root entries (and the system
// files if k implements System).
func New(k Kernel, extra map[string]fs.Node) *fs.Filesystem {
	if s, ok := k.(System); ok {
		all := systemEntries(s)
		for n, node := range extra {
			all[n] = node
		}
		extra = all
	}
	root := &synth.DynamicDir{Attr: synth.Attr{Mode: 0o555}}
	cache := &nodeCache{}
	root.Names = func(ctx fs.Context) []string {
		pids := k.PIDs(ctx)
		cache.keep(pids)
		names := make([]string, 0, len(extra)+2)
		for n := range extra {
			names = append(names, n)
		}
		names = append(names, "self", "thread-self", "mounts", "filesystems")
		sort.Strings(names)
		for _, pid := range pids {
			names = append(names, strconv.Itoa(int(pid)))
		}
		return names
	}
	self := &synth.Symlink{Attr: synth.Attr{Mode: 0o777}, Target: func(ctx fs.Context) (string, error) {
		tgid, _, ok := selfIDs(k, ctx)
		if !ok {
			return "", unix.ENOENT
		}
		return strconv.Itoa(int(tgid)), nil
	}}
	threadSelf := &synth.Symlink{Attr: synth.Attr{Mode: 0o777}, Target: func(ctx fs.Context) (string, error) {
		tgid, tid, ok := selfIDs(k, ctx)
		if !ok {
			return "", unix.ENOENT
		}
		return strconv.Itoa(int(tgid)) + "/task/" + strconv.Itoa(int(tid)), nil
	}}
	mounts := synth.NewSymlink("self/mounts")
	filesystems := synth.NewStaticFile(0o444, []byte(filesystemsText))
	root.Get = func(ctx fs.Context, name string) (fs.Node, error) {
		switch name {
		case "self":
			return self, nil
		case "thread-self":
			return threadSelf, nil
		case "mounts":
			return mounts, nil
		case "filesystems":
			return filesystems, nil
		}
		if n, ok := extra[name]; ok {
			return n, nil
		}
		pid, err := strconv.ParseInt(name, 10, 32)
		if err != nil || pid <= 0 || strconv.Itoa(int(pid)) != name {
			return nil, unix.ENOENT
		}
		t, ok := k.ThreadGroup(ctx, int32(pid))
		if !ok {
			return nil, unix.ENOENT
		}
		live := func(id int32) bool { _, ok := k.ThreadGroup(ctx, id); return ok }
		return cache.get(int32(pid), t, ownerOf(t), func() fs.Node { return taskDir(t, true) }, live), nil
	}
	return synth.NewFilesystem("proc", ProcSuperMagic, root, false)
}

// readerRoot is the root links are shown from: the caller's, or else the
// target's.
func readerRoot(ctx fs.Context, t Task) fs.VirtualDentry {
	if fc, ok := ctx.(FSContexter); ok {
		if c := fc.FSContext(); c != nil {
			return c.Root()
		}
	}
	if c := t.FSContext(); c != nil {
		return c.Root()
	}
	return fs.VirtualDentry{}
}

// vdLink is the magic link exe, cwd or root of t: readlink and following
// it take the ptrace access check (Linux's proc_fd_access_allowed),
// EACCES otherwise, whatever the mode bits.
func vdLink(t Task, mode uint32, get func() (fs.VirtualDentry, bool)) *synth.MagicLink {
	return &synth.MagicLink{
		Attr:  ownerOf(t).attr(mode, false),
		Check: ptraceCheck(t),
		Path: func(ctx fs.Context) (string, error) {
			vd, ok := get()
			if !ok {
				return "", unix.ENOENT
			}
			p, _ := fs.PathOf(readerRoot(ctx, t), vd)
			return p, nil
		},
		Resolve: func(ctx fs.Context) (fs.VirtualDentry, *fs.FileDescription, error) {
			vd, ok := get()
			if !ok {
				return fs.VirtualDentry{}, nil, unix.ENOENT
			}
			return vd, nil, nil
		},
	}
}

// taskDir is /proc/[pid] for a process (withThreads), or
// /proc/[pid]/task/[tid] for one of its threads.
func taskDir(t Task, withThreads bool) fs.Node {
	o := ownerOf(t)
	owned := func(mode uint32) synth.Attr { return o.attr(mode, false) }
	entries := map[string]fs.Node{
		"exe": vdLink(t, 0o777, t.Exe),
		"cwd": vdLink(t, 0o777, func() (fs.VirtualDentry, bool) {
			if c := t.FSContext(); c != nil {
				return c.Cwd(), true
			}
			return fs.VirtualDentry{}, false
		}),
		"root": vdLink(t, 0o777, func() (fs.VirtualDentry, bool) {
			if c := t.FSContext(); c != nil {
				return c.Root(), true
			}
			return fs.VirtualDentry{}, false
		}),
		"cmdline": &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			return t.Cmdline(), nil
		}},
		"comm": &synth.File{Attr: owned(0o644), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			return []byte(t.Comm() + "\n"), nil
		}},
		"fd":     fdDir(t, owned(0o500)),
		"fdinfo": fdInfoDir(t, owned(0o500)),
		"mounts": &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			return mountsText(t), nil
		}},
		"mountinfo": &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(fs.Context) ([]byte, error) {
			return mountInfoText(t), nil
		}},
	}
	addMemFiles(t, entries, func(m uint32) synth.Attr { return owned(m) })
	addTaskFiles(t, entries, owned)
	if tt, ok := t.(ThreadsTask); ok && withThreads {
		entries["task"] = threadsDir(tt, o.attr(0o555, true))
	}
	if st, ok := t.(StatTask); ok {
		entries["stat"] = &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(ctx fs.Context) ([]byte, error) {
			return []byte(st.StatText(mayPtrace(t, ctx) == nil)), nil
		}}
		entries["status"] = &synth.File{Attr: owned(0o444), SizeZero: true, Generate: func(ctx fs.Context) ([]byte, error) {
			if sf, ok := t.(StatusForTask); ok {
				return []byte(sf.StatusTextFor(readerUserNS(ctx))), nil
			}
			return []byte(st.StatusText()), nil
		}}
	}
	d := synth.NewDir(0o555, entries)
	a := o.attr(0o555, true)
	d.UID, d.GID = a.UID, a.GID
	return d
}

func threadsDir(tt ThreadsTask, attr synth.Attr) fs.Node {
	cache := &nodeCache{}
	d := &synth.DynamicDir{Attr: attr, Names: func(fs.Context) []string {
		tids := tt.TIDs()
		cache.keep(tids)
		names := make([]string, len(tids))
		for i, tid := range tids {
			names[i] = strconv.Itoa(int(tid))
		}
		return names
	}}
	d.Get = func(ctx fs.Context, name string) (fs.Node, error) {
		tid, err := strconv.ParseInt(name, 10, 32)
		if err != nil || tid <= 0 || strconv.Itoa(int(tid)) != name {
			return nil, unix.ENOENT
		}
		th, ok := tt.Thread(int32(tid))
		if !ok {
			return nil, unix.ENOENT
		}
		live := func(id int32) bool { _, ok := tt.Thread(id); return ok }
		return cache.get(int32(tid), th, ownerOf(th), func() fs.Node { return taskDir(th, false) }, live), nil
	}
	return d
}

func fdNames(t Task) []string {
	tbl := t.FDTable()
	if tbl == nil {
		return nil
	}
	fds := tbl.FDs()
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = strconv.Itoa(int(fd))
	}
	return names
}

// fileOf returns the file at descriptor name with a reference.
func fileOf(t Task, name string) (*fs.FileDescription, error) {
	fd, err := strconv.ParseInt(name, 10, 32)
	if err != nil || strconv.Itoa(int(fd)) != name {
		return nil, unix.ENOENT
	}
	tbl := t.FDTable()
	if tbl == nil {
		return nil, unix.ENOENT
	}
	f, _, ok := tbl.Get(int32(fd))
	if !ok {
		return nil, unix.ENOENT
	}
	return f, nil
}

// SameProcessTask is implemented by tasks, threads included, that know
// whether the caller belongs to their process.
type SameProcessTask interface {
	SameProcess(ctx fs.Context) bool
}

// ownFDDir is /proc/[pid]/fd: its mode bits, and the process's own
// threads besides, which reach it even when the process is not dumpable
// and the directory belongs to root (Linux's proc_fd_permission).
type ownFDDir struct {
	*synth.DynamicDir
	t Task
}

// GrantsAccess implements fs.AccessNode.
func (d ownFDDir) GrantsAccess(ctx fs.Context, ats int) bool {
	sp, ok := d.t.(SameProcessTask)
	return ok && sp.SameProcess(ctx)
}

func fdDir(t Task, attr synth.Attr) fs.Node {
	cache := &nodeCache{}
	d := &synth.DynamicDir{Attr: attr, Names: func(fs.Context) []string {
		names := fdNames(t)
		ids := make([]int32, len(names))
		for i, n := range names {
			fd, _ := strconv.Atoi(n)
			ids[i] = int32(fd)
		}
		cache.keep(ids)
		return names
	}}
	d.Get = func(ctx fs.Context, name string) (fs.Node, error) {
		f, err := fileOf(t, name)
		if err != nil {
			return nil, err
		}
		f.DecRef()
		fd, _ := strconv.Atoi(name)
		live := func(id int32) bool {
			g, err := fileOf(t, strconv.Itoa(int(id)))
			if err != nil {
				return false
			}
			g.DecRef()
			return true
		}
		return cache.get(int32(fd), f, ownerOf(t), func() fs.Node { return fdLink(t, name, f) }, live), nil
	}
	return ownFDDir{DynamicDir: d, t: t}
}

// fdLink is /proc/[pid]/fd/name, a link to the descriptor's file f;
// readlink and following it take the ptrace access check, as vdLink.
func fdLink(t Task, name string, f *fs.FileDescription) fs.Node {
	mode := uint32(0)
	if f.Readable() {
		mode |= 0o500
	}
	if f.Writable() {
		mode |= 0o300
	}
	return &synth.MagicLink{
		Attr:  ownerOf(t).attr(mode, false),
		Check: ptraceCheck(t),
		Path: func(ctx fs.Context) (string, error) {
			f, err := fileOf(t, name)
			if err != nil {
				return "", err
			}
			defer f.DecRef()
			p, _ := fs.PathOf(readerRoot(ctx, t), f.VirtualDentry())
			return p, nil
		},
		Resolve: func(ctx fs.Context) (fs.VirtualDentry, *fs.FileDescription, error) {
			f, err := fileOf(t, name)
			if err != nil {
				return fs.VirtualDentry{}, nil, err
			}
			return fs.VirtualDentry{}, f, nil
		},
	}
}

func fdInfoDir(t Task, attr synth.Attr) fs.Node {
	d := &synth.DynamicDir{Attr: attr, Names: func(fs.Context) []string { return fdNames(t) }}
	d.Get = func(ctx fs.Context, name string) (fs.Node, error) {
		f, err := fileOf(t, name)
		if err != nil {
			return nil, err
		}
		f.DecRef()
		// Opening it takes the ptrace access check (Linux's
		// proc_fdinfo_access_allowed), whatever the mode bits.
		return &synth.File{
			Attr: ownerOf(t).attr(0o444, false), SizeZero: true,
			Check: ptraceCheck(t),
			Generate: func(ctx fs.Context) ([]byte, error) {
				f, err := fileOf(t, name)
				if err != nil {
					return nil, err
				}
				defer f.DecRef()
				mnt := 0
				if m := f.Mount(); m != nil {
					mnt = m.ID()
				}
				flags := f.Flags()
				if tbl := t.FDTable(); tbl != nil {
					fd, _ := strconv.Atoi(name)
					if g, fl, ok := tbl.Get(int32(fd)); ok {
						g.DecRef()
						if fl.CloseOnExec {
							flags |= unix.O_CLOEXEC
						}
					}
				}
				text := fmt.Sprintf("pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\n", f.Offset(), flags, mnt)
				if fi, ok := f.Impl().(FDInfoer); ok {
					text += fi.FDInfo()
				}
				return []byte(text), nil
			},
		}, nil
	}
	return d
}
