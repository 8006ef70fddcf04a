package kernel

import (
	"io"
	"path"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/loader"
	"github.com/moat-sandbox/moat/sentry/mm"
	"github.com/moat-sandbox/moat/sentry/platform/ptrace"
)

// execFile adapts an open file description to the loader and the memory
// manager. It holds a reference to the file for as long as mappings may
// read it.
type execFile struct {
	fd *fs.FileDescription
	vd fs.VirtualDentry
	// deny is the file's ETXTBSY denial (fs.DenyWriteAccess); nil for
	// files mapped by mmap.
	deny *fs.WriteDenial
	// unreadable says the task may execute the file but not read it;
	// uid and gid own it (wouldDump).
	unreadable bool
	uid        auth.KUID
	gid        auth.KGID
}

// allowWrite lifts f's denial of writers.
func (f *execFile) allowWrite() {
	if f.deny != nil {
		f.deny.Release()
	}
}

// exeHold is the denial an address space keeps of its executable
// (mm.ExeHold).
type exeHold struct{ d *fs.WriteDenial }

func (h exeHold) Dup() mm.ExeHold { return exeHold{h.d.Dup()} }
func (h exeHold) Release()        { h.d.Release() }

func (f *execFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.fd.PRead(background, p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// CacheKey implements mm.Cacheable: mappings of one file share its pages.
// A file whose implementation names contents that never change (such as
// the read-only gofer tree under the root's overlay) is keyed by that;
// otherwise files under a read-only mount, which do not change while the
// sandbox runs, by their dentry; others only by this open file.
func (f *execFile) CacheKey() any {
	if c, ok := f.fd.Impl().(mm.Cacheable); ok {
		if key := c.CacheKey(); key != nil {
			return key
		}
	}
	if f.vd.Mount != nil && f.vd.Mount.ReadOnly() {
		return f.vd.Dentry
	}
	return f
}

func (f *execFile) Size() (int64, error) {
	st, err := f.fd.Stat(background)
	return st.Size, err
}

// openExec opens the file at vd for execution, with Linux's checks.
func openExec(ctx fs.Context, vd fs.VirtualDentry) (*execFile, error) {
	st, err := vd.Stat(ctx)
	if err != nil {
		return nil, err
	}
	if !st.IsRegular() {
		return nil, unix.EACCES
	}
	if vd.Mount != nil && vd.Mount.Flags().NoExec { // memfds have no mount
		return nil, unix.EACCES
	}
	if err := fs.CheckPermission(ctx.Credentials(), &st, fs.MayExec); err != nil {
		return nil, err
	}
	// Loading needs no read permission (Linux's open_exec); a program
	// its user cannot read runs, but not dumpable (wouldDump).
	unreadable := fs.CheckPermission(ctx.Credentials(), &st, fs.MayRead) != nil
	fd, err := fs.OpenForExec(ctx, vd)
	if err != nil {
		return nil, err
	}
	// A file open for writing cannot be executed (ETXTBSY), and is not
	// opened for writing while it is (loadImage says how long).
	deny, err := fs.DenyWriteAccess(ctx, vd)
	if err != nil {
		fd.DecRef()
		return nil, err
	}
	return &execFile{fd: fd, vd: vd, deny: deny, unreadable: unreadable, uid: st.UID, gid: st.GID}, nil
}

// execDump is what Linux's would_dump decides for an exec: whether the
// new program must not be dumpable, and the user namespace its address
// space belongs to (mm->user_ns).
type execDump struct {
	nonDumpable bool
	userNS      *auth.UserNamespace
}

// wouldDump is Linux's would_dump over the files an exec loaded (the
// program and its interpreters) for a task with credentials c: a file c
// cannot read makes the program non-dumpable, and moves its address
// space up to the nearest user namespace that maps the file's owner and
// group, so that only those privileged over the file may look into it.
func wouldDump(c *auth.Credentials, files []*execFile) execDump {
	d := execDump{userNS: c.UserNamespace}
	for _, f := range files {
		if !f.unreadable {
			continue
		}
		d.nonDumpable = true
		for d.userNS != nil {
			_, uidOK := d.userNS.MapFromKUID(f.uid)
			_, gidOK := d.userNS.MapFromKGID(f.gid)
			if uidOK && gidOK {
				break
			}
			d.userNS = d.userNS.Parent()
		}
	}
	return d
}

// execOpener resolves interpreters for the loader from the task's root.
type execOpener struct {
	t      *Task
	opened []*execFile
}

func (o *execOpener) Open(p string) (loader.File, error) {
	root, cwd := o.t.FSContext().RootAndCwd()
	vd, err := fs.Resolve(o.t, &fs.Lookup{Root: root, Start: cwd, Path: p, FollowFinal: true, OpenHint: true})
	if err != nil {
		return nil, err
	}
	f, err := openExec(o.t, vd)
	if err != nil {
		return nil, err
	}
	o.opened = append(o.opened, f)
	return f, nil
}

// ExecOptions are the arguments of execve and execveat.
type ExecOptions struct {
	// Start is where a relative Path starts (cwd or a directory fd).
	Start fs.VirtualDentry
	Path  string
	// EmptyPath executes Start itself (AT_EMPTY_PATH).
	EmptyPath bool
	// NoFollow fails on a symlink (AT_SYMLINK_NOFOLLOW).
	NoFollow   bool
	Argv, Envv []string
	// Filename is the name the program gets (AT_EXECFN, a script's
	// argument to its interpreter, the command name): Path when empty.
	// execveat relative to a descriptor names it "/dev/fd/N[/path]".
	Filename string
	// PathInaccessible says Filename names a close-on-exec descriptor,
	// which the new program cannot open: a script then fails with
	// ENOENT (Linux's BINPRM_FLAGS_PATH_INACCESSIBLE).
	PathInaccessible bool
}

// Execve replaces the task's program, as execve(2) does. On success the
// registers are the new program's and the caller must not set rax.
func (t *Task) Execve(o ExecOptions) error {
	root, _ := t.FSContext().RootAndCwd()
	// The file is opened for reading next (openExec): the lookup may
	// bring its host fd along.
	vd, err := fs.Resolve(t, &fs.Lookup{Root: root, Start: o.Start, Path: o.Path, FollowFinal: !o.NoFollow, EmptyPath: o.EmptyPath, OpenHint: true})
	if err != nil {
		return err
	}
	if o.NoFollow {
		if st, err := vd.Stat(t); err == nil && st.IsSymlink() {
			return unix.ELOOP
		}
	}
	f, err := openExec(t, vd)
	if err != nil {
		return err
	}
	filename := o.Filename
	if filename == "" {
		filename = o.Path
	}
	if o.PathInaccessible {
		var hdr [2]byte
		if n, _ := f.ReadAt(hdr[:], 0); n == 2 && hdr == [2]byte{'#', '!'} {
			f.allowWrite()
			return unix.ENOENT
		}
	}
	nm, res, exe, dump, err := t.k.loadImage(t, f, filename, o.Argv, o.Envv)
	if err != nil {
		return err
	}
	return t.commitExec(nm, res, exe, path.Base(filename), dump)
}

// loadImage builds a new address space holding the program in f, and
// says whether the program may be dumpable (wouldDump).
func (k *Kernel) loadImage(t *Task, f *execFile, filename string, argv, envv []string) (*mm.MemoryManager, loader.Result, fs.VirtualDentry, execDump, error) {
	nm := mm.New(k.Platform, k.MemFile)
	stackLimit := t.tg.limits.Get(unix.RLIMIT_STACK).Cur
	nm.SetStackLimit(stackLimit)
	vdsoBase, err := k.mapVDSO(nm)
	if err != nil {
		nm.DecUsers()
		f.allowWrite()
		return nil, loader.Result{}, fs.VirtualDentry{}, execDump{}, err
	}
	op := &execOpener{t: t}
	var random [16]byte
	randomBytes(random[:])
	c := t.Credentials()
	res, err := loader.Load(mm.Loader{M: nm, Name: fileName(t)}, op, loader.Args{
		Filename:   filename,
		File:       f,
		Argv:       argv,
		Envv:       envv,
		Random:     random,
		VDSOBase:   vdsoBase,
		UID:        c.UserNamespace.UIDOf(c.RealUID),
		EUID:       c.UserNamespace.UIDOf(c.EffectiveUID),
		GID:        c.UserNamespace.GIDOf(c.RealGID),
		EGID:       c.UserNamespace.GIDOf(c.EffectiveGID),
		HWCap:      hwcap(),
		HWCap2:     2, // HWCAP2_FSGSBASE
		ClockTicks: 100,
		StackLimit: stackLimit,
		// The frames setupSignalFrame pushes.
		MinSigStackSize: minSigStackSize(),
	})
	if err != nil {
		nm.DecUsers()
		f.allowWrite()
		for _, o := range op.opened {
			o.allowWrite()
		}
		return nil, loader.Result{}, fs.VirtualDentry{}, execDump{}, err
	}
	nm.ArgvStart, nm.ArgvEnd, nm.EnvvStart, nm.EnvvEnd = res.ArgvStart, res.ArgvEnd, res.EnvvStart, res.EnvvEnd
	nm.StartCode, nm.EndCode = nm.CodeRange(res.Base)
	nm.StartStack = res.Stack
	for _, a := range res.Auxv {
		nm.Auxv = append(nm.Auxv, a.Key, a.Value)
	}
	nm.VDSOBase = vdsoBase
	// /proc/self/exe names the file loaded as the main executable: the
	// script's interpreter for #! files.
	exe := f.vd
	if res.ExeFilename != filename && len(op.opened) > 0 {
		exe = op.opened[0].vd
	}
	// The main executable stays unwritable while the address space
	// lives, forked copies included (Linux's exe_file); the others (the
	// dynamic loader, a script) only while they were loaded.
	kept := false
	loaded := append([]*execFile{f}, op.opened...)
	for _, o := range loaded {
		if o.vd == exe && !kept && o.deny != nil {
			nm.SetExeHold(exeHold{o.deny})
			kept = true
		} else {
			o.allowWrite()
		}
	}
	return nm, res, exe, wouldDump(c, loaded), nil
}

// fileName names file mappings in /proc/[pid]/maps.
func fileName(t *Task) func(loader.File) string {
	return func(lf loader.File) string {
		f, ok := lf.(*execFile)
		if !ok {
			return ""
		}
		root := t.FSContext().Root()
		p, _ := fs.PathOf(root, f.vd)
		return p
	}
}

// commitExec switches the task to the new image: the point of no return.
func (t *Task) commitExec(nm *mm.MemoryManager, res loader.Result, exe fs.VirtualDentry, name string, dump execDump) error {
	k := t.k
	// Kill the other threads and wait for them to go (de_thread).
	k.mu.Lock()
	if t.tg.groupExiting || (t.tg.execing != nil && t.tg.execing != t) {
		// The group is exiting, or a sibling's exec is killing this
		// thread: it ends here, alone in the second case.
		status, group := t.tg.groupExitStatus, t.tg.groupExiting
		k.mu.Unlock()
		nm.DecUsers()
		t.exit(status, group)
		return errTaskExited
	}
	t.tg.execing = t
	for o := range t.tg.tasks {
		if o != t {
			o.interrupt()
		}
	}
	for len(t.tg.tasks) > 1 && !t.tg.groupExiting {
		k.mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		k.mu.Lock()
	}
	t.tg.execing = nil
	if t.tg.groupExiting {
		// A group exit (exit_group, a fatal signal) overtook the exec,
		// which then never happens, as Linux's de_thread gives up.
		status := t.tg.groupExitStatus
		k.mu.Unlock()
		nm.DecUsers()
		t.exit(status, true)
		return errTaskExited
	}
	oldTID := t.tid
	if t.tg.leader != t {
		// The exec'ing thread takes over the leader's id.
		k.unmapTaskLocked(t)
		t.tid, t.ids = t.tg.id, t.tg.ids
		k.mapTaskLocked(t)
		t.tg.leader = t
	}
	t.tg.execedSinceFork = true
	// Handlers go back to the default; a shared table is unshared.
	t.sigHandlers = t.sigHandlers.resetForExec()
	t.altStack = SignalStack{Flags: SS_DISABLE}
	k.mu.Unlock()
	// The personality survives, but for READ_IMPLIES_EXEC, which a
	// 64-bit program never starts with (set_personality_64bit).
	t.attrs.mu.Lock()
	t.attrs.personality &^= PersonalityReadImpliesExec
	t.attrs.mu.Unlock()

	// The old image's robust futexes and PI locks are released as at
	// exit (Linux's futex_exec_release), under the id the thread now has.
	if t.robustList != 0 {
		k.Futexes.HandleRobustList(t.futexTarget(), t.robustList, uint32(t.Tid()))
	}
	k.Futexes.ThreadExited(uint32(oldTID))
	k.Futexes.ThreadStarted(uint32(t.tid))
	t.releaseChildTID()
	old := t.MemoryManager()
	t.tg.noteMaxRSS(old.MaxResidentSize())
	t.mm.Store(nm)
	old.DecUsers()

	// Close-on-exec, in an unshared table.
	ofdt := t.FDTable()
	fdt := ofdt.Fork()
	ofdt.DecRef()
	fdt.CloseOnExec()
	t.fdTable.Store(fdt)

	t.regs = ptrace.InitialRegisters()
	t.regs.Rip = uint64(res.Entry)
	t.regs.Rsp = uint64(res.Stack)
	t.fpInit = true
	t.fpCopy = nil
	t.SetName(name)
	t.exePath.Store(&exe)
	t.robustList = 0
	if t.vforkDone != nil {
		close(t.vforkDone)
		t.vforkDone = nil
	}
	k.mu.Lock()
	// Setuid programs are not honoured; the credentials stay.
	c := t.Credentials().Fork()
	c.SavedUID, c.SavedGID = c.EffectiveUID, c.EffectiveGID
	c.FilesystemUID, c.FilesystemGID = c.EffectiveUID, c.EffectiveGID
	c.KeepCaps = false // SECBIT_KEEP_CAPS is cleared by execve
	t.recomputeCapsForExec(c)
	t.creds.Store(c)
	t.tg.procAttrs.resetForExec(c.EffectiveUID != c.RealUID || c.EffectiveGID != c.RealGID || dump.nonDumpable, dump.userNS)
	k.mu.Unlock()
	return nil
}

// recomputeCapsForExec applies Linux's capability rules for execve of a
// file without file capabilities: root keeps (gets) the bounding set,
// others keep only ambient capabilities.
func (t *Task) recomputeCapsForExec(c *auth.Credentials) {
	root := rootKUIDForExec(c)
	if c.EffectiveUID == root || c.RealUID == root {
		c.PermittedCaps = (c.InheritableCaps | c.BoundingCaps)
		c.EffectiveCaps = c.PermittedCaps
		if c.EffectiveUID != root {
			// Only the real uid is 0: no effective bit, so the
			// effective set is the ambient one.
			c.EffectiveCaps = c.AmbientCaps
		}
		return
	}
	c.PermittedCaps = c.AmbientCaps
	c.EffectiveCaps = c.AmbientCaps
}

// MappableFile returns fd as a file that can back mappings. The mapping
// keeps a reference to fd.
func MappableFile(fd *fs.FileDescription) mm.File {
	fd.IncRef()
	return &execFile{fd: fd, vd: fd.VirtualDentry()}
}

// MappingName names a file mapping in /proc/[pid]/maps.
func (t *Task) MappingName(fd *fs.FileDescription) string {
	p, _ := fs.PathOf(t.FSContext().Root(), fd.VirtualDentry())
	return p
}
