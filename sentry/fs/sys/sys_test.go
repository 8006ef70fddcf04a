package sys

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

func mountSys(t *testing.T, ncpu int) (*fstest.Context, fs.VirtualDentry) {
	t.Helper()
	ctx := fstest.NewContext()
	root := synth.NewDir(0o755, map[string]fs.Node{"sys": synth.NewDir(0o555, nil)})
	ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, root, true), fs.MountFlags{})
	rvd := ns.Root()
	at, err := fs.Resolve(ctx, &fs.Lookup{Root: rvd, Start: rvd, Path: "/sys"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Mount(ctx, at, New(ncpu), fs.MountFlags{}); err != nil {
		t.Fatal(err)
	}
	return ctx, rvd
}

func read(t *testing.T, ctx fs.Context, root fs.VirtualDentry, p string) string {
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

func TestSysfs(t *testing.T) {
	for _, tc := range []struct {
		ncpu  int
		files map[string]string
	}{
		{1, map[string]string{
			"devices/system/cpu/online":                             "0\n",
			"devices/system/cpu/possible":                           "0\n",
			"devices/system/cpu/cpu0/topology/core_siblings":        "1\n",
			"devices/system/cpu/cpu0/topology/thread_siblings_list": "0\n",
		}},
		{2, map[string]string{
			"devices/system/cpu/online":                      "0-1\n",
			"devices/system/cpu/present":                     "0-1\n",
			"devices/system/cpu/cpu1/online":                 "1\n",
			"devices/system/cpu/cpu1/topology/core_id":       "1\n",
			"devices/system/cpu/cpu1/topology/core_siblings": "3\n",
			"devices/system/cpu/cpu1/topology/core_cpus":     "2\n",
			"kernel/mm/transparent_hugepage/enabled":         "always [madvise] never\n",
			"kernel/mm/transparent_hugepage/hpage_pmd_size":  "2097152\n",
			"devices/system/node/online":                     "0\n",
			"devices/system/node/node0/cpulist":              "0-1\n",
			"devices/system/node/node0/cpumap":               "3\n",
			"devices/system/cpu/cpu1/node0/cpulist":          "0-1\n",
		}},
		{40, map[string]string{
			"devices/system/cpu/online":                       "0-39\n",
			"devices/system/cpu/cpu0/topology/core_cpus":      "00,00000001\n",
			"devices/system/cpu/cpu39/topology/core_siblings": "ff,ffffffff\n",
		}},
		{64, map[string]string{
			"devices/system/cpu/cpu33/topology/thread_siblings": "00000002,00000000\n",
		}},
	} {
		ctx, root := mountSys(t, tc.ncpu)
		for p, want := range tc.files {
			t.Run(p, func(t *testing.T) {
				if got := read(t, ctx, root, "/sys/"+p); got != want {
					t.Errorf("ncpu %d: %s = %q, want %q", tc.ncpu, p, got, want)
				}
			})
		}
		d, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/sys/devices/system/cpu"}, fs.OpenOptions{Flags: unix.O_DIRECTORY})
		if err != nil {
			t.Fatal(err)
		}
		cpus := 0
		d.Impl().(fs.DirIterator).IterDirents(ctx, d, func(e fs.Dirent) bool {
			if strings.HasPrefix(e.Name, "cpu") {
				cpus++
			}
			return true
		})
		d.DecRef()
		if cpus != tc.ncpu {
			t.Errorf("ncpu %d: %d cpuN directories", tc.ncpu, cpus)
		}
	}
	ctx, root := mountSys(t, 2)
	vd, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/sys/fs/cgroup"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := vd.Stat(ctx); err != nil || !st.IsDir() {
		t.Errorf("/sys/fs/cgroup: %v %v", st, err)
	}
	if _, err := fs.Open(ctx, fs.Lookup{Root: root, Start: root, Path: "/sys/devices/system/cpu/online"}, fs.OpenOptions{Flags: unix.O_WRONLY}); err == nil {
		t.Errorf("sysfs opened for writing")
	}
}
