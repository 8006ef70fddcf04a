package specutils

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestValidateSysctl(t *testing.T) {
	all := []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace}, {Type: specs.MountNamespace}}
	without := func(typ specs.LinuxNamespaceType) []specs.LinuxNamespace {
		var out []specs.LinuxNamespace
		for _, ns := range all {
			if ns.Type != typ {
				out = append(out, ns)
			}
		}
		return out
	}
	hostNet := append(without(specs.NetworkNamespace), specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: "/proc/self/ns/net"})
	for _, tc := range []struct {
		name string
		key  string
		ns   []specs.LinuxNamespace
		err  string
	}{
		{"ip_forward", "net.ipv4.ip_forward", all, ""},
		{"ip_forward host net", "net.ipv4.ip_forward", without(specs.NetworkNamespace), `sysctl "net.ipv4.ip_forward" not allowed in host network namespace`},
		{"ip_forward host net by path", "net.ipv4.ip_forward", hostNet, `sysctl "net.ipv4.ip_forward" not allowed in host network namespace`},
		{"shmmax", "kernel.shmmax", all, ""},
		{"mqueue", "fs.mqueue.msg_max", all, ""},
		{"shmmax host ipc", "kernel.shmmax", without(specs.IPCNamespace), `sysctl "kernel.shmmax" is not allowed in the hosts ipc namespace`},
		{"domainname", "kernel.domainname", all, ""},
		{"hostname", "kernel.hostname", all, `sysctl "kernel.hostname" is not allowed as it conflicts with the OCI "hostname" field`},
		{"domainname host uts", "kernel.domainname", without(specs.UTSNamespace), `sysctl "kernel.domainname" is not in a separate kernel namespace`},
		{"vm", "vm.swappiness", all, `sysctl "vm.swappiness" is not in a separate kernel namespace`},
		{"unknown kernel", "kernel.foo", all, `sysctl "kernel.foo" is not in a separate kernel namespace`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &specs.Spec{Linux: &specs.Linux{Namespaces: tc.ns, Sysctl: map[string]string{tc.key: "1"}}}
			err := validateSysctl(spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("validateSysctl = %q, want %q", got, tc.err)
			}
		})
	}
}
