package proc

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// MemTask is implemented by tasks that can show their memory: the
// environment and auxiliary vector areas and the mappings.
type MemTask interface {
	// Environ is the environment area: NUL-terminated strings.
	Environ() []byte
	// Auxv is the auxiliary vector as the process received it.
	Auxv() []byte
	// Maps is /proc/[pid]/maps.
	Maps() string
}

// addMemFiles adds environ, auxv and maps for tasks that are MemTasks.
func addMemFiles(t Task, entries map[string]fs.Node, owned func(uint32) synth.Attr) {
	mt, ok := t.(MemTask)
	if !ok {
		return
	}
	// Each open, in any mode, takes the ptrace access check (mem.go);
	// a readable one then generates the contents.
	check := ptraceCheck(t)
	entries["environ"] = &synth.File{Attr: owned(0o400), SizeZero: true, Check: check,
		Generate: func(fs.Context) ([]byte, error) { return mt.Environ(), nil }}
	entries["auxv"] = &synth.File{Attr: owned(0o400), SizeZero: true, Check: check,
		Generate: func(fs.Context) ([]byte, error) { return mt.Auxv(), nil }}
	entries["maps"] = &synth.File{Attr: owned(0o444), SizeZero: true, Check: check,
		Generate: func(fs.Context) ([]byte, error) { return []byte(mt.Maps()), nil }}
}

// mountOptions returns the per-mount options as /proc/mounts shows them.
func mountOptions(m *fs.Mount) string {
	opts := "rw"
	if m.ReadOnly() {
		opts = "ro"
	}
	f := m.Flags()
	if f.NoSUID {
		opts += ",nosuid"
	}
	if f.NoDev {
		opts += ",nodev"
	}
	if f.NoExec {
		opts += ",noexec"
	}
	return opts
}

// mountSource is the "device" column: the source the file system was
// mounted from, else its type ("none" for a root nobody named).
func mountSource(m *fs.Mount) string {
	if src := m.Filesystem().MountInfo().Source; src != "" {
		return src
	}
	if p, _ := m.Parent(); p == nil {
		return "none"
	}
	return m.Filesystem().Type()
}

// mountRoot is mountinfo's root column: the path of m's root within its
// file system, below the file system's own root path (a host directory
// the gofer serves as a bind shows as that directory).
func mountRoot(m *fs.Mount) string {
	rootPath := "/"
	// A bind mount of a subtree: its path within the file system.
	var names []string
	for d := m.Root(); d != nil && !d.IsRoot(); d = d.Parent() {
		names = append(names, d.Name())
	}
	for i := len(names) - 1; i >= 0; i-- {
		rootPath = path.Join(rootPath, names[i])
	}
	if base := m.Filesystem().MountInfo().Root; base != "" {
		rootPath = path.Join(base, rootPath)
	}
	return rootPath
}

// escapeMountPath escapes the characters /proc/mounts escapes.
func escapeMountPath(p string) string {
	r := strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`)
	return r.Replace(p)
}

// visibleMounts returns the mounts of t's namespace reachable from its
// root, with their paths.
func visibleMounts(t Task) ([]*fs.Mount, []string) {
	c := t.FSContext()
	if c == nil {
		return nil, nil
	}
	root := c.Root()
	if root.Mount == nil {
		return nil, nil
	}
	var ms []*fs.Mount
	var paths []string
	for _, m := range root.Mount.Namespace().Mounts() {
		p, ok := fs.PathOf(root, fs.VirtualDentry{Mount: m, Dentry: m.Root()})
		if !ok {
			continue
		}
		ms = append(ms, m)
		paths = append(paths, p)
	}
	return ms, paths
}

// mountsText is /proc/[pid]/mounts.
func mountsText(t Task) []byte {
	var b strings.Builder
	ms, paths := visibleMounts(t)
	for i, m := range ms {
		fmt.Fprintf(&b, "%s %s %s %s 0 0\n", mountSource(m), escapeMountPath(paths[i]), m.Filesystem().Type(), mountOptions(m))
	}
	return []byte(b.String())
}

// propagationFields are mountinfo's optional fields: " shared:N" for a
// shared mount, " master:N" for a slave, " unbindable".
func propagationFields(m *fs.Mount) string {
	p := m.Propagation()
	var b strings.Builder
	if p.Shared != 0 {
		fmt.Fprintf(&b, " shared:%d", p.Shared)
	}
	if p.Master != 0 {
		fmt.Fprintf(&b, " master:%d", p.Master)
	}
	if p.Unbindable {
		b.WriteString(" unbindable")
	}
	return b.String()
}

// mountInfoText is /proc/[pid]/mountinfo.
func mountInfoText(t Task) []byte {
	var b strings.Builder
	ms, paths := visibleMounts(t)
	for i, m := range ms {
		parentID := m.ID()
		if p, _ := m.Parent(); p != nil {
			parentID = p.ID()
		}
		dev := m.Filesystem().Dev()
		rootPath := mountRoot(m)
		super := "rw"
		if m.Filesystem().ReadOnly() {
			super = "ro"
		}
		fmt.Fprintf(&b, "%d %d %d:%d %s %s %s%s - %s %s %s\n", m.ID(), parentID, unix.Major(dev), unix.Minor(dev),
			escapeMountPath(rootPath), escapeMountPath(paths[i]), mountOptions(m), propagationFields(m),
			m.Filesystem().Type(), mountSource(m), super)
	}
	return []byte(b.String())
}

// filesystemsText is /proc/filesystems: the file system types the Sentry
// has, in Linux's format.
const filesystemsText = "nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\nnodev\tdevpts\nnodev\tpipefs\nnodev\tanon_inodefs\nnodev\t9p\n"
