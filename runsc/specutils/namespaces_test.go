package specutils

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestCheckNamespacePath(t *testing.T) {
	for _, tc := range []struct {
		typ     specs.LinuxNamespaceType
		path    string
		wantErr string
	}{
		{specs.NetworkNamespace, "/proc/self/ns/net", ""},
		{specs.MountNamespace, "/proc/self/ns/mnt", ""},
		{specs.PIDNamespace, "/proc/self/ns/pid", ""},
		{specs.UTSNamespace, "/proc/self/ns/uts", ""},
		{specs.UserNamespace, "/proc/self/ns/user", ""},
		{specs.IPCNamespace, "/proc/self/ns/ipc", ""},
		{specs.CgroupNamespace, "/proc/self/ns/cgroup", ""},
		{specs.UserNamespace, "/proc/self/ns/uts", "is not a user namespace"},
		{specs.NetworkNamespace, "/proc/self/ns/pid", "is not a network namespace"},
		{specs.CgroupNamespace, "/proc/self/ns/ipc", "is not a cgroup namespace"},
		{specs.NetworkNamespace, "/etc/hostname", "is not a namespace"},
		{specs.NetworkNamespace, "/nonexistent/ns", "no such file"},
	} {
		t.Run(string(tc.typ)+" "+tc.path, func(t *testing.T) {
			err := checkNamespacePath(tc.typ, tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
