package kernel

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel/auth"
	"github.com/moat-sandbox/moat/sentry/mm"
)

func newNSTestKernel(t *testing.T) (*Kernel, *mm.MemoryFile) {
	t.Helper()
	mf, err := mm.NewMemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	return NewTestKernel(mf), mf
}

func TestUnshareUTSAndIPC(t *testing.T) {
	k, mf := newNSTestKernel(t)
	task := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	rootUTS, rootIPC := task.UTSNamespace(), task.IPCNamespace()
	if rootUTS.Inode() != initUTSInode || rootIPC.Inode() != initIPCInode {
		t.Fatalf("initial inodes %#x %#x", rootUTS.Inode(), rootIPC.Inode())
	}
	k.SetHostname("box")
	if err := task.Unshare(unix.CLONE_NEWUTS | unix.CLONE_NEWIPC); err != nil {
		t.Fatalf("Unshare: %v", err)
	}
	uts, ipc := task.UTSNamespace(), task.IPCNamespace()
	if uts == rootUTS || ipc == rootIPC {
		t.Fatal("namespaces not replaced")
	}
	if uts.Inode() == ipc.Inode() || uts.Inode() < nsInodeFirst {
		t.Errorf("inodes %#x %#x", uts.Inode(), ipc.Inode())
	}
	if got := uts.Hostname(); got != "box" {
		t.Errorf("copied hostname %q", got)
	}
	uts.SetHostname("inner")
	if got := k.Hostname(); got != "box" {
		t.Errorf("root hostname changed to %q", got)
	}
	if ipc.SHM() == rootIPC.SHM() {
		t.Error("IPC namespace shares the shm registry")
	}
}

func TestUnshareChecks(t *testing.T) {
	k, mf := newNSTestKernel(t)
	root := k.NewTestTask(nil, mm.New(fakePlatform{}, mf), auth.NewRootCredentials())
	user := auth.NewRootCredentials()
	user.EffectiveCaps = 0
	plain := k.NewTestTask(root, mm.New(fakePlatform{}, mf), user)
	for _, tc := range []struct {
		name  string
		task  *Task
		flags uint64
		want  error
	}{
		{"zero", root, 0, nil},
		{"unknown flag", root, unix.CLONE_PARENT, unix.EINVAL},
		{"uts without cap", plain, unix.CLONE_NEWUTS, unix.EPERM},
		{"ipc without cap", plain, unix.CLONE_NEWIPC, unix.EPERM},
		{"files without cap", plain, unix.CLONE_FILES, nil},
		{"net unsupported", root, unix.CLONE_NEWNET, unix.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.task.Unshare(tc.flags); err != tc.want {
				t.Errorf("Unshare(%#x) = %v, want %v", tc.flags, err, tc.want)
			}
		})
	}
}
