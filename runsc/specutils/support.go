package specutils

import (
	"fmt"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// specialMounts are mount destinations whose spec mounts the Sentry
// makes from its own file systems (/sys/fs/cgroup is not mounted yet);
// nothing in them comes from the host.
var specialMounts = map[string]string{
	"/proc":          "proc",
	"/dev":           "tmpfs",
	"/dev/pts":       "devpts",
	"/dev/shm":       "tmpfs",
	"/dev/mqueue":    "mqueue",
	"/sys":           "sysfs",
	"/sys/fs/cgroup": "cgroup",
}

// sandboxMountTypes are the file system types the sandbox mounts itself
// at boot wherever a spec puts them (runsc/boot/specmounts.go).
var sandboxMountTypes = map[string]bool{"tmpfs": true, "proc": true, "sysfs": true, "devpts": true, "mqueue": true}

// Check returns an error for a spec field runsc cannot honour and would
// change the container's meaning if ignored, and a note for each field it
// ignores for now, so that nothing is dropped silently. Validate must
// have accepted spec.
func Check(spec *specs.Spec) (notes []string, err error) {
	p := spec.Process
	if p.User.Username != "" {
		notes = append(notes, "process.user.username is ignored (Windows only)")
	}
	if p.ApparmorProfile != "" {
		notes = append(notes, "process.apparmorProfile is ignored: the Sentry is the container's kernel")
	}
	if p.SelinuxLabel != "" {
		notes = append(notes, "process.selinuxLabel is ignored: the Sentry is the container's kernel")
	}
	if p.Scheduler != nil {
		notes = append(notes, "process.scheduler is not applied yet")
	}
	if p.IOPriority != nil {
		notes = append(notes, "process.ioPriority is not applied yet")
	}
	if p.ExecCPUAffinity != nil {
		notes = append(notes, "process.execCPUAffinity is not applied yet")
	}
	for i, m := range spec.Mounts {
		if t, ok := specialMounts[m.Destination]; ok && (m.Type == t || m.Type == "bind" && t == "cgroup") {
			continue
		}
		isBind := m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
		if isBind {
			continue // served by the gofer, mounted by the sandbox at boot
		}
		if sandboxMountTypes[m.Type] {
			continue // made inside the sandbox at boot
		}
		notes = append(notes, fmt.Sprintf("mounts[%d] (%s on %s) is not mounted yet", i, m.Type, m.Destination))
	}
	if spec.Hooks != nil {
		h := spec.Hooks
		if len(h.CreateContainer)+len(h.StartContainer) > 0 {
			notes = append(notes, "createContainer and startContainer hooks run on the host: the container's namespaces are the Sentry's")
		}
	}
	if l := spec.Linux; l != nil {
		for i, ns := range l.Namespaces {
			// The sandbox process joins a network namespace path
			// (runsc/container); the others are the Sentry's own.
			if ns.Path != "" && ns.Type != specs.NetworkNamespace {
				notes = append(notes, fmt.Sprintf("linux.namespaces[%d]: joining the %s namespace %q is not supported; the sandbox has its own", i, ns.Type, ns.Path))
			}
		}
		// linux.resources and cgroupsPath: runsc/container applies them
		// and names what it leaves out.
		// linux.sysctl: Validate checks the namespaces, and the
		// sandbox's kernel the keys it models (at create).
		for i, d := range l.Devices {
			if !sentryDevice(d) {
				notes = append(notes, fmt.Sprintf("linux.devices[%d] (%s): the node is made, but the sandbox has no driver for it (opening it gives ENXIO)", i, d.Path))
			}
		}
		if l.IntelRdt != nil || l.Personality != nil || l.TimeOffsets != nil || l.MemoryPolicy != nil || l.NetDevices != nil {
			notes = append(notes, "linux.intelRdt, personality, timeOffsets, memoryPolicy and netDevices are ignored")
		}
		// maskedPaths and readonlyPaths are applied at boot.
	}
	return notes, nil
}

// Default returns the spec `runsc spec` writes, as runc's: a shell in
// ./rootfs on a terminal, with the usual mounts, capabilities and
// namespaces.
// rootless adds a user namespace mapping the caller's uid and gid to root
// and leaves out what an unprivileged user cannot have.
func Default(rootless bool, uid, gid uint32) *specs.Spec {
	caps := []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	spec := &specs.Spec{
		Version: specs.Version,
		Process: &specs.Process{
			Terminal: true,
			User:     specs.User{UID: 0, GID: 0},
			Args:     []string{"sh"},
			Env:      []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"},
			Cwd:      "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding: caps, Effective: caps, Permitted: caps,
			},
			Rlimits:         []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
			NoNewPrivileges: true,
		},
		Root:     &specs.Root{Path: "rootfs", Readonly: true},
		Hostname: "runsc",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		},
		Linux: &specs.Linux{
			MaskedPaths: []string{
				"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
			},
			ReadonlyPaths: []string{
				"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace},
			},
		},
	}
	if rootless {
		spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		spec.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uid, Size: 1}}
		spec.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: gid, Size: 1}}
		// No network namespace of its own, and sysfs and cgroup bound
		// from the host, as runc's rootless spec has them.
		ns := spec.Linux.Namespaces[:0]
		for _, n := range spec.Linux.Namespaces {
			if n.Type != specs.NetworkNamespace {
				ns = append(ns, n)
			}
		}
		spec.Linux.Namespaces = ns
		for i := range spec.Mounts {
			switch spec.Mounts[i].Destination {
			case "/sys":
				spec.Mounts[i] = specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}}
			case "/dev/pts":
				spec.Mounts[i].Options = []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
			}
		}
		mounts := spec.Mounts[:0]
		for _, m := range spec.Mounts {
			if m.Destination != "/sys/fs/cgroup" && m.Destination != "/dev/mqueue" {
				mounts = append(mounts, m)
			}
		}
		spec.Mounts = append(mounts, specs.Mount{Destination: "/dev/mqueue", Type: "bind", Source: "/dev/mqueue", Options: []string{"rbind", "nosuid", "noexec", "nodev"}})
	}
	return spec
}

// sentryDevice reports whether the Sentry serves d itself: a character
// device null, zero, full, random, urandom or tty, or a FIFO.
func sentryDevice(d specs.LinuxDevice) bool {
	if d.Type == "p" {
		return true
	}
	if d.Type != "c" && d.Type != "u" {
		return false
	}
	switch [2]int64{d.Major, d.Minor} {
	case [2]int64{1, 3}, [2]int64{1, 5}, [2]int64{1, 7}, [2]int64{1, 8}, [2]int64{1, 9}, [2]int64{5, 0}:
		return true
	}
	return false
}
