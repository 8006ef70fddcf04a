package container

import (
	"os"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/moat-sandbox/moat/runsc/sandbox"
	sentryproc "github.com/moat-sandbox/moat/sentry/fs/proc"
)

func TestKernelSettings(t *testing.T) {
	adj := 500
	for _, tc := range []struct {
		name string
		spec specs.Spec
		err  string
	}{
		{name: "none", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{}}},
		{name: "oom", spec: specs.Spec{Process: &specs.Process{OOMScoreAdj: &adj}}},
		{name: "sysctl", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{Sysctl: map[string]string{"net.ipv4.ip_forward": "1"}}}},
		{name: "unknown sysctl", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{Sysctl: map[string]string{"kernel.msgmax": "1"}}},
			err: `linux.sysctl: sysctl "kernel.msgmax" is not supported by the sandbox's kernel`},
		{name: "bad value", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{Sysctl: map[string]string{"net.ipv4.ip_forward": "on"}}},
			err: `linux.sysctl: sysctl "net.ipv4.ip_forward": invalid value "on"`},
		{name: "maps without user namespace", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{
			UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 10}}}}},
		{name: "maps", spec: specs.Spec{Process: &specs.Process{}, Linux: &specs.Linux{
			Namespaces:  []specs.LinuxNamespace{{Type: specs.UserNamespace}},
			UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 10}},
			GIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 2000, Size: 20}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := kernelSettings(&tc.spec)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("kernelSettings: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "none", "maps without user namespace":
				if ks != nil {
					t.Errorf("settings %+v, want none", ks)
				}
			case "oom":
				if ks == nil || ks.OOMScoreAdj == nil || *ks.OOMScoreAdj != 500 {
					t.Errorf("settings %+v, want oomScoreAdj 500", ks)
				}
			case "sysctl":
				if ks == nil || ks.Sysctl["net.ipv4.ip_forward"] != "1" {
					t.Errorf("settings %+v, want the sysctl", ks)
				}
			case "maps":
				if ks == nil || len(ks.UIDMappings) != 1 || ks.UIDMappings[0] != (sentryproc.IDMap{ContainerID: 0, HostID: 1000, Size: 10}) ||
					len(ks.GIDMappings) != 1 || ks.GIDMappings[0] != (sentryproc.IDMap{ContainerID: 0, HostID: 2000, Size: 20}) {
					t.Errorf("settings %+v, want the maps", ks)
				}
			}
		})
	}
}

func TestSetOOMScoreAdj(t *testing.T) {
	cur, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skipf("no oom_score_adj: %v", err)
	}
	v := strings.TrimSpace(string(cur))
	n := 0
	for _, c := range v {
		n = n*10 + int(c-'0')
	}
	if strings.HasPrefix(v, "-") {
		t.Skip("this process's oom_score_adj is negative")
	}
	// Writing the value a process has changes nothing and succeeds.
	same := n
	if err := setOOMScoreAdj(&specs.Spec{Process: &specs.Process{OOMScoreAdj: &same}}, os.Getpid()); err != nil {
		t.Errorf("setting the current value: %v", err)
	}
	if err := setOOMScoreAdj(&specs.Spec{Process: &specs.Process{}}, os.Getpid()); err != nil {
		t.Errorf("no oomScoreAdj: %v", err)
	}
}

func TestHostNamespaceOptions(t *testing.T) {
	user := specs.LinuxNamespace{Type: specs.UserNamespace}
	m := func(c, h, n uint32) []specs.LinuxIDMapping {
		return []specs.LinuxIDMapping{{ContainerID: c, HostID: h, Size: n}}
	}
	for _, tc := range []struct {
		name     string
		linux    specs.Linux
		netns    string
		wantMaps bool
	}{
		{name: "none", linux: specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.NetworkNamespace}}}},
		{name: "net path", linux: specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.NetworkNamespace, Path: "/proc/1/ns/net"}}}, netns: "/proc/1/ns/net"},
		{name: "ipc path stays own", linux: specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.IPCNamespace, Path: "/proc/1/ns/ipc"}}}},
		{name: "user maps", linux: specs.Linux{Namespaces: []specs.LinuxNamespace{user}, UIDMappings: m(0, 1000, 2000), GIDMappings: m(0, 1000, 3000)}, wantMaps: true},
		{name: "maps without user namespace", linux: specs.Linux{UIDMappings: m(0, 1000, 2000), GIDMappings: m(0, 1000, 3000)}},
		{name: "maps without root", linux: specs.Linux{Namespaces: []specs.LinuxNamespace{user}, UIDMappings: m(1, 1000, 2000), GIDMappings: m(0, 1000, 3000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o sandbox.CreateOptions
			hostNamespaceOptions(&specs.Spec{Linux: &tc.linux}, &o)
			if o.NetNSPath != tc.netns {
				t.Errorf("NetNSPath %q, want %q", o.NetNSPath, tc.netns)
			}
			if got := len(o.UIDMappings) > 0 && len(o.GIDMappings) > 0; got != tc.wantMaps {
				t.Errorf("maps %v %v, want maps %v", o.UIDMappings, o.GIDMappings, tc.wantMaps)
			}
			if tc.wantMaps && (o.UIDMappings[0].HostID != 1000 || o.UIDMappings[0].Size != 2000 || o.GIDMappings[0].Size != 3000) {
				t.Errorf("maps %v %v", o.UIDMappings, o.GIDMappings)
			}
		})
	}
}
