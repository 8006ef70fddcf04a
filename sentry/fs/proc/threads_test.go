package proc

import (
	"testing"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// threadedTask is a process with threads 1 and 7, each with its own stat.
type threadedTask struct {
	*fakeTask
	thread int32 // 0 for the process
}

func (t threadedTask) TIDs() []int32 { return []int32{1, 7} }

func (t threadedTask) Thread(tid int32) (Task, bool) {
	if tid != 1 && tid != 7 {
		return nil, false
	}
	return threadedTask{fakeTask: t.fakeTask, thread: tid}, true
}

func (t threadedTask) StatText(bool) string {
	if t.thread == 7 {
		return "7 (prog) S"
	}
	return "1 (prog) R"
}

func (t threadedTask) StatusText() string { return "" }

type oneTaskKernel struct{ t Task }

func (k oneTaskKernel) ThreadGroup(_ fs.Context, pid int32) (Task, bool) { return k.t, pid == 1 }
func (k oneTaskKernel) PIDs(fs.Context) []int32                          { return []int32{1} }

func TestTaskDirectory(t *testing.T) {
	ctx := fstest.NewContext()
	root := synth.NewDir(0o755, map[string]fs.Node{"proc": synth.NewDir(0o555, nil)})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	rvd := ns.Root()
	task := threadedTask{fakeTask: &fakeTask{pid: 1, fds: fs.NewFDTable(), fsc: fs.NewFSContext(rvd, rvd, 0o22)}}
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, New(oneTaskKernel{task}, nil), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/proc/1/stat", "1 (prog) R"},
		{"/proc/1/task/1/stat", "1 (prog) R"},
		{"/proc/1/task/7/stat", "7 (prog) S"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := readAll(t, ctx, rvd, tc.path); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
	for _, p := range []string{"/proc/1/task/8", "/proc/1/task/07", "/proc/1/task/7/task"} {
		if _, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: p}); err == nil {
			t.Errorf("%s resolves", p)
		}
	}
}
