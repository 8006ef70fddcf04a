package proc

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/fstest"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

func TestCheckSysctl(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"net.ipv4.ip_forward", "1", true},
		{"net.ipv4.ip_forward", "-5", true},
		{"net.ipv4.ip_forward", "2147483648", false},
		{"net.ipv4.ip_forward", "yes", false},
		{"net.ipv4.ping_group_range", "0 2147483647", true},
		{"net.ipv4.ping_group_range", "5 1", true},
		{"net.ipv4.ping_group_range", "0 4294967294", true},
		{"net.ipv4.ping_group_range", "0 4294967295", false},
		{"net.ipv4.ip_local_port_range", "5000 4000", false},
		{"net.ipv4.ip_local_port_range", "0 4000", false},
		{"net.ipv4.ip_unprivileged_port_start", "0", true},
		{"kernel.shm_rmid_forced", "1", true},
		{"net.ipv4.tcp_keepalive_time", "-1", true},
		{"net.ipv4.tcp_keepalive_probes", "256", false},
		{"kernel.domainname", "example.org", true},
		{"kernel.domainname", string(make([]byte, 65)), false},
		{"kernel.msgmax", "100", false},
		{"net.ipv6.conf.all.disable_ipv6", "1", false},
		{"vm.swappiness", "1", false},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			err := CheckSysctl(tc.key, tc.value)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckSysctl: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestSettableSysctls(t *testing.T) {
	// The fake kernel keeps no Settings: its /proc has Settings of its
	// own.
	ctx, root, _ := sysSetup(t)
	for _, tc := range []struct {
		path, write string
		err         error
		want        string
	}{
		{"/proc/sys/net/ipv4/ip_forward", "", nil, "0\n"},
		{"/proc/sys/net/ipv4/ip_forward", "1\n", nil, "1\n"},
		{"/proc/sys/net/ipv4/ip_forward", "1x\n", unix.EINVAL, "1\n"},
		{"/proc/sys/net/ipv4/conf/all/forwarding", "", nil, "1\n"},
		{"/proc/sys/net/ipv4/conf/all/forwarding", "9", nil, "9\n"},
		{"/proc/sys/net/ipv4/ip_forward", "", nil, "9\n"},
		{"/proc/sys/net/ipv4/conf/default/forwarding", "", nil, "0\n"},
		{"/proc/sys/kernel/shm_rmid_forced", "2", unix.EINVAL, "0\n"},
		{"/proc/sys/net/ipv4/ping_group_range", "", nil, "1\t0\n"},
		{"/proc/sys/net/ipv4/ping_group_range", "0   2147483647\n", nil, "0\t2147483647\n"},
		{"/proc/sys/net/ipv4/ping_group_range", "7 3", nil, "1\t0\n"},
		{"/proc/sys/kernel/shm_rmid_forced", "1", nil, "1\n"},
		{"/proc/sys/net/core/somaxconn", "", nil, "4096\n"},
		{"/proc/sys/kernel/hostname", "", nil, "box\n"},
	} {
		t.Run(tc.path+"="+tc.write, func(t *testing.T) {
			if tc.write != "" {
				if err := writeFile(t, ctx, root, tc.path, tc.write); err != tc.err {
					t.Fatalf("write %q: %v, want %v", tc.write, err, tc.err)
				}
			}
			if got := readAll(t, ctx, root, tc.path); got != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
		})
	}
}

// settingsKernel is sysKernel with Settings.
type settingsKernel struct {
	*sysKernel
	set *Settings
}

func (k settingsKernel) Settings() *Settings { return k.set }

// settingsTask is richTask with Settings.
type settingsTask struct {
	*richTask
	set *Settings
}

func (t settingsTask) Settings() *Settings { return t.set }

// settingsKernel is sysKernel with Settings, whose process has them too.
func (k settingsKernel) ThreadGroup(_ fs.Context, pid int32) (Task, bool) {
	return settingsTask{k.task, k.set}, pid == 1
}

func TestSettingsShown(t *testing.T) {
	set := &Settings{}
	if err := set.SetSysctl("net.ipv4.ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	if err := set.SetSysctl("vm.swappiness", "1"); err != unix.ENOENT {
		t.Errorf("SetSysctl of an unknown key: %v, want ENOENT", err)
	}
	set.SetIDMaps([]IDMap{{0, 1000, 2000}}, []IDMap{{0, 1000, 3000}, {5000, 9000, 1}})
	_, _, sk := sysSetup(t)
	k := settingsKernel{sk, set}
	// Two /proc mounts of one kernel share its values.
	ctx, root := fstest.NewContext(), fs.VirtualDentry{}
	var roots []fs.VirtualDentry
	for i := 0; i < 2; i++ {
		rootDir := synth.NewDir(0o755, map[string]fs.Node{"proc": synth.NewDir(0o555, nil)})
		ns := fs.NewMountNamespace(synth.NewFilesystem("rootfs", 1, rootDir, true), fs.MountFlags{})
		root = ns.Root()
		at, err := fs.Resolve(ctx, &fs.Lookup{Root: root, Start: root, Path: "/proc"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ns.Mount(ctx, at, New(k, nil), fs.MountFlags{}); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	for _, tc := range []struct{ path, want string }{
		{"/proc/sys/net/ipv4/ip_forward", "1\n"},
		{"/proc/sys/kernel/shm_rmid_forced", "0\n"},
		{"/proc/1/uid_map", "         0       1000       2000\n"},
		{"/proc/1/gid_map", "         0       1000       3000\n      5000       9000          1\n"},
	} {
		if got := readAll(t, ctx, roots[0], tc.path); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.path, got, tc.want)
		}
	}
	if err := writeFile(t, ctx, roots[0], "/proc/sys/net/ipv4/ip_forward", "0"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, ctx, roots[1], "/proc/sys/net/ipv4/ip_forward"); got != "0\n" {
		t.Errorf("ip_forward through the other /proc = %q after the write, want 0", got)
	}
	if got := set.Sysctl("net.ipv4.ip_forward"); got != "0" {
		t.Errorf("Settings has ip_forward %q after the write, want 0", got)
	}
}

// FuzzSetSysctl checks that any value written to a settable sysctl either
// fails with EINVAL and leaves the value alone, or is stored in a form
// that reads back and parses to itself.
func FuzzSetSysctl(f *testing.F) {
	for _, s := range []string{"1", "0 2147483647", " 5\t9 ", "-1", "abc", "1 2 3", "99999999999999999999", "\x00"} {
		f.Add(s)
	}
	keys := make([]string, 0, len(settableSysctls))
	for k := range settableSysctls {
		keys = append(keys, k)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, key := range keys {
			var set Settings
			before := set.Sysctl(key)
			err := set.SetSysctl(key, v)
			got := set.Sysctl(key)
			if err != nil {
				if err != unix.EINVAL || got != before {
					t.Fatalf("%s=%q: %v, value %q (was %q)", key, v, err, got, before)
				}
				continue
			}
			if err := set.SetSysctl(key, got); err != nil || set.Sysctl(key) != got {
				t.Fatalf("%s=%q stored %q, which does not parse to itself (%v)", key, v, got, err)
			}
		}
	})
}
