package proc

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/pipe"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
	"github.com/moat-sandbox/moat/sentry/kernel/auth"
)

type fakeTask struct {
	pid  int32
	exe  fs.VirtualDentry
	fds  *fs.FDTable
	fsc  *fs.FSContext
	args []byte
}

func (t *fakeTask) PID() int32                     { return t.pid }
func (t *fakeTask) Credentials() *auth.Credentials { return auth.NewRootCredentials() }
func (t *fakeTask) Exe() (fs.VirtualDentry, bool)  { return t.exe, t.exe.Ok() }
func (t *fakeTask) FDTable() *fs.FDTable           { return t.fds }
func (t *fakeTask) FSContext() *fs.FSContext       { return t.fsc }
func (t *fakeTask) Cmdline() []byte                { return t.args }
func (t *fakeTask) Comm() string                   { return "prog" }

type fakeKernel struct{ tasks map[int32]*fakeTask }

func (k *fakeKernel) ThreadGroup(_ fs.Context, pid int32) (Task, bool) {
	t, ok := k.tasks[pid]
	return t, ok
}

func (k *fakeKernel) PIDs(fs.Context) []int32 { return []int32{1} }

func setup(t *testing.T) (*fstest.Context, fs.VirtualDentry, *fakeTask) {
	t.Helper()
	ctx := fstest.NewContext()
	root := synth.NewDir(0o755, map[string]fs.Node{
		"proc": synth.NewDir(0o555, nil),
		"bin":  synth.NewDir(0o755, map[string]fs.Node{"prog": synth.NewStaticFile(0o755, []byte("ELF"))}),
	})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	rvd := ns.Root()
	task := &fakeTask{pid: 1, fds: fs.NewFDTable(), fsc: fs.NewFSContext(rvd, rvd, 0o22), args: []byte("prog\x00-x\x00")}
	k := &fakeKernel{tasks: map[int32]*fakeTask{1: task}}
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, New(k, map[string]fs.Node{"version": synth.NewStaticFile(0o444, []byte("Moat\n"))}), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	task.exe, err = fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/bin/prog"})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, rvd, task
}

func readlink(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p string) (string, error) {
	t.Helper()
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p})
	if err != nil {
		return "", err
	}
	l, ok := vd.Dentry.Node().(fs.SymlinkNode)
	if !ok {
		return "", unix.EINVAL
	}
	return l.Readlink(ctx)
}

func readAll(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p string) string {
	t.Helper()
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer f.DecRef()
	buf := make([]byte, 4096)
	n, _ := f.Read(ctx, buf)
	return string(buf[:n])
}

func TestProc(t *testing.T) {
	ctx, root, task := setup(t)
	r, w := pipe.NewPair(ctx, 0)
	defer r.DecRef()
	defer w.DecRef()
	task.fds.NewFD(0, r, fs.FDFlags{}, 1024)                  // 0
	task.fds.NewFD(0, w, fs.FDFlags{CloseOnExec: true}, 1024) // 1
	prog, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/bin/prog"}, fs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task.fds.NewFD(0, prog, fs.FDFlags{}, 1024) // 2
	prog.DecRef()

	links := []struct{ path, want string }{
		{"/proc/self", "1"},
		{"/proc/self/exe", "/bin/prog"},
		{"/proc/1/cwd", "/"},
		{"/proc/self/fd/2", "/bin/prog"},
		{"/proc/self/fd/0", r.Dentry().Name()},
	}
	for _, l := range links {
		if got, err := readlink(t, ctx, root, l.path); got != l.want || err != nil {
			t.Errorf("readlink %s = %q, %v; want %q", l.path, got, err, l.want)
		}
	}
	if !strings.HasPrefix(r.Dentry().Name(), "pipe:[") {
		t.Errorf("pipe name %q", r.Dentry().Name())
	}
	if got := readAll(t, ctx, root, "/proc/self/cmdline"); got != "prog\x00-x\x00" {
		t.Errorf("cmdline %q", got)
	}
	if got := readAll(t, ctx, root, "/proc/1/comm"); got != "prog\n" {
		t.Errorf("comm %q", got)
	}
	if got := readAll(t, ctx, root, "/proc/version"); got != "Moat\n" {
		t.Errorf("version %q", got)
	}
	if got := readAll(t, ctx, root, "/proc/self/fdinfo/1"); !strings.Contains(got, "flags:\t02000001") {
		t.Errorf("fdinfo %q", got)
	}
	infoFile := fs.NewAnonFile("test", &infoImpl{}, unix.O_RDWR, fs.FDOptions{})
	task.fds.NewFDAt(7, infoFile, fs.FDFlags{}, 1024)
	infoFile.DecRef()
	if got := readAll(t, ctx, root, "/proc/self/fdinfo/7"); !strings.HasSuffix(got, "\nmnt_id:\t0\nextra:\t42\n") {
		t.Errorf("fdinfo with extra lines %q", got)
	}
	// Opening a descriptor's link reopens its file.
	if got := readAll(t, ctx, root, "/proc/self/fd/2"); got != "ELF" {
		t.Errorf("reopened file read %q", got)
	}
	w2, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/proc/self/fd/0"}, fs.OpenOptions{Flags: unix.O_WRONLY})
	if err != nil {
		t.Fatal(err)
	}
	w2.Write(ctx, []byte("via proc"))
	w2.DecRef()
	buf := make([]byte, 16)
	if n, _ := r.Read(ctx, buf); string(buf[:n]) != "via proc" {
		t.Errorf("pipe reopened through /proc read %q", buf[:n])
	}
	// Walking through an fd link to a directory.
	task.fds.NewFDAt(5, mustOpen(t, ctx, root, "/bin"), fs.FDFlags{}, 1024)
	if got := readAll(t, ctx, root, "/proc/self/fd/5/prog"); got != "ELF" {
		t.Errorf("through fd dir %q", got)
	}
	for _, p := range []string{"/proc/2", "/proc/self/fd/9", "/proc/01", "/proc/self/fd/x"} {
		if _, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p}); err != unix.ENOENT {
			t.Errorf("%s: %v, want ENOENT", p, err)
		}
	}
	if got := readAll(t, ctx, root, "/proc/mounts"); got != "none / rootfs ro 0 0\nproc /proc proc rw 0 0\n" {
		t.Errorf("mounts %q", got)
	}
	if got := readAll(t, ctx, root, "/proc/self/mountinfo"); !strings.Contains(got, " / /proc rw - proc proc rw\n") || !strings.HasPrefix(got, "1 1 0:") {
		t.Errorf("mountinfo %q", got)
	}
	if got := readAll(t, ctx, root, "/proc/filesystems"); !strings.Contains(got, "nodev\tproc\n") {
		t.Errorf("filesystems %q", got)
	}
	// A descriptor's link keeps its inode number while it stays open.
	ino := func(p string) uint64 {
		vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: p})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := vd.Stat(ctx)
		return st.Ino
	}
	if a, b := ino("/proc/self/fd/2"), ino("/proc/1/fd/2"); a != b {
		t.Errorf("fd/2 inode %d then %d", a, b)
	}
	// Listing.
	d, _ := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/proc/self/fd"}, fs.OpenOptions{Flags: unix.O_DIRECTORY})
	defer d.DecRef()
	var names []string
	d.Impl().(fs.DirIterator).IterDirents(ctx, d, func(e fs.Dirent) bool { names = append(names, e.Name); return true })
	if got := strings.Join(names, ","); got != ".,..,0,1,2,5,7" {
		t.Errorf("fd dir %s", got)
	}
}

func mustOpen(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p string) *fs.FileDescription {
	t.Helper()
	f, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: p}, fs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// infoImpl is a file with its own fdinfo lines.
type infoImpl struct {
	fs.FileDefaults
	fs.NotPollable
}

func (*infoImpl) FDInfo() string { return "extra:\t42\n" }
