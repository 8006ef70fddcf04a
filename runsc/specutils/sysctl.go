package specutils

import (
	"fmt"
	"os"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ipcSysctls are the sysctls of the IPC namespace besides fs.mqueue.*.
var ipcSysctls = map[string]bool{
	"kernel.msgmax": true, "kernel.msgmnb": true, "kernel.msgmni": true, "kernel.sem": true,
	"kernel.shmall": true, "kernel.shmmax": true, "kernel.shmmni": true, "kernel.shm_rmid_forced": true,
}

// validateSysctl refuses, with runc's words, a linux.sysctl key that is
// not in a namespace the container has of its own: an IPC one without an
// ipc namespace, a net. one in the host's network namespace, and anything
// else but kernel.domainname with a uts namespace. Which of the allowed
// ones the sandbox can set is the kernel's business (proc.CheckSysctl).
func validateSysctl(spec *specs.Spec) error {
	if spec.Linux == nil || len(spec.Linux.Sysctl) == 0 {
		return nil
	}
	keys := make([]string, 0, len(spec.Linux.Sysctl))
	for k := range spec.Linux.Sysctl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, s := range keys {
		if ipcSysctls[s] || strings.HasPrefix(s, "fs.mqueue.") {
			if !HasNamespace(spec, specs.IPCNamespace) {
				return fmt.Errorf("sysctl %q is not allowed in the hosts ipc namespace", s)
			}
			continue
		}
		if strings.HasPrefix(s, "net.") {
			host, err := hostNetwork(spec)
			if err != nil {
				return err
			}
			if host {
				return fmt.Errorf("sysctl %q not allowed in host network namespace", s)
			}
			continue
		}
		if HasNamespace(spec, specs.UTSNamespace) {
			switch s {
			case "kernel.domainname":
				continue
			case "kernel.hostname":
				return fmt.Errorf("sysctl %q is not allowed as it conflicts with the OCI %q field", s, "hostname")
			}
		}
		return fmt.Errorf("sysctl %q is not in a separate kernel namespace", s)
	}
	return nil
}

// hostNetwork reports whether the container is in runsc's own network
// namespace: the spec has no network namespace, or names the one runsc
// is in.
func hostNetwork(spec *specs.Spec) (bool, error) {
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type != specs.NetworkNamespace {
			continue
		}
		if ns.Path == "" {
			return false, nil
		}
		return sameFile(ns.Path, "/proc/self/ns/net")
	}
	return true, nil
}

// sameFile reports whether a and b are the same file (device and inode).
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
