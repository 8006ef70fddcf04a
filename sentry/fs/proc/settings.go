package proc

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/fs"
	"github.com/moat-sandbox/moat/sentry/fs/synth"
)

// This file holds what a container runtime sets in the sandbox's kernel
// at boot and /proc shows: the sysctls the Sentry models (linux.sysctl of
// an OCI spec, then writes to /proc/sys by root) and the id maps of the
// container's user namespace (linux.uidMappings and gidMappings).

// Settings are a kernel's runtime settings. The zero value has every
// sysctl at its default and the identity id maps.
type Settings struct {
	// mu guards the fields below; a leaf.
	mu      sync.Mutex
	sysctls map[string]string
	uidMap  []IDMap
	gidMap  []IDMap
}

// SettingsKernel is implemented by kernels that keep Settings.
type SettingsKernel interface {
	Settings() *Settings
}

// SettingsTask is implemented by processes whose kernel keeps Settings:
// their uid_map and gid_map show its id maps. The sandbox has one user
// namespace, so every process shows the same.
type SettingsTask interface {
	Settings() *Settings
}

// IDMap is one line of uid_map or gid_map: Size ids from ContainerID in
// the container's user namespace are HostID and on in its parent's.
type IDMap struct {
	ContainerID, HostID, Size uint32
}

// sysctl is one settable /proc/sys value.
type sysctl struct {
	// def is the value before anything sets it.
	def string
	// parse checks a value and returns it as /proc/sys shows it.
	parse func(string) (string, error)
}

// intRange parses one integer in [lo, hi], as proc_dointvec_minmax.
func intRange(lo, hi int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < lo || n > hi {
			return "", unix.EINVAL
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// intPair parses two integers in [lo, hi], shown tab-separated. A first
// above the second is EINVAL, or, if emptyAs is set, stands for the empty
// range and is stored as emptyAs (net.ipv4.ping_group_range's "1 0").
func intPair(lo, hi int64, emptyAs string) func(string) (string, error) {
	return func(v string) (string, error) {
		f := strings.Fields(v)
		if len(f) != 2 {
			return "", unix.EINVAL
		}
		a, err1 := strconv.ParseInt(f[0], 10, 64)
		b, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || a < lo || a > hi || b < lo || b > hi {
			return "", unix.EINVAL
		}
		if a > b {
			if emptyAs == "" {
				return "", unix.EINVAL
			}
			return emptyAs, nil
		}
		return fmt.Sprintf("%d\t%d", a, b), nil
	}
}

// settableSysctls are the sysctls a container may set that the Sentry
// models, by dotted name, with Linux's defaults. Their values are the
// sandbox's own state; none reaches the host. The Sentry's network stack
// forwards nothing and lets any user bind any port and open ping sockets,
// so the net.ipv4 values are kept and shown, not enforced. The ranges
// are Linux's (6.x): ip_forward and tcp_syncookies take any int.
var settableSysctls = map[string]sysctl{
	"net.ipv4.ip_forward":                 {"0", intRange(math.MinInt32, math.MaxInt32)},
	"net.ipv4.conf.all.forwarding":        {"0", intRange(math.MinInt32, math.MaxInt32)},
	"net.ipv4.conf.default.forwarding":    {"0", intRange(math.MinInt32, math.MaxInt32)},
	"net.ipv4.ip_unprivileged_port_start": {"1024", intRange(0, 65535)},
	"net.ipv4.ping_group_range":           {"1\t0", intPair(0, math.MaxUint32-1, "1\t0")},
	"net.ipv4.tcp_syncookies":             {"1", intRange(math.MinInt32, math.MaxInt32)},
	"net.ipv4.ip_local_port_range":        {"32768\t60999", intPair(1, 65535, "")},
	"net.core.somaxconn":                  {"4096", intRange(0, 2147483647)},
	// Seconds kept in jiffies: Linux refuses what overflows an int of
	// them; this bound holds for any HZ up to 1000.
	"net.ipv4.tcp_keepalive_time":   {"7200", intRange(math.MinInt32/1000, math.MaxInt32/1000)},
	"net.ipv4.tcp_keepalive_intvl":  {"75", intRange(math.MinInt32/1000, math.MaxInt32/1000)},
	"net.ipv4.tcp_fin_timeout":      {"60", intRange(math.MinInt32/1000, math.MaxInt32/1000)},
	"net.ipv4.tcp_keepalive_probes": {"9", intRange(0, 255)},
	"kernel.shm_rmid_forced":        {"0", intRange(0, 1)},
}

// sysctlAliases are sysctls that are another's value under a second
// name: Linux's ip_forward is conf/all/forwarding.
var sysctlAliases = map[string]string{"net.ipv4.conf.all.forwarding": "net.ipv4.ip_forward"}

// sysctlPath is the /proc/sys path of a dotted sysctl name.
func sysctlPath(key string) []string { return strings.Split(key, ".") }

// CheckSysctl reports whether the Sentry can set key to value: an error
// naming the key for a sysctl it does not model (or models only through
// another setting), and EINVAL for a value Linux would refuse. The UTS
// names (kernel.hostname, kernel.domainname) are the kernel's, checked
// here for their length only.
func CheckSysctl(key, value string) error {
	switch key {
	case "kernel.hostname", "kernel.domainname":
		if len(value) > utsNameMax {
			return fmt.Errorf("sysctl %q: value longer than %d bytes", key, utsNameMax)
		}
		return nil
	}
	s, ok := settableSysctls[key]
	if !ok {
		return fmt.Errorf("sysctl %q is not supported by the sandbox's kernel", key)
	}
	if _, err := s.parse(value); err != nil {
		return fmt.Errorf("sysctl %q: invalid value %q", key, value)
	}
	return nil
}

// SetSysctl sets a settable sysctl as a write to its /proc/sys file does
// (CheckSysctl says which). The UTS names are set through the kernel, not
// here.
func (s *Settings) SetSysctl(key, value string) error {
	def, ok := settableSysctls[key]
	if !ok {
		return unix.ENOENT
	}
	v, err := def.parse(value)
	if err != nil {
		return err
	}
	if a, ok := sysctlAliases[key]; ok {
		key = a
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sysctls == nil {
		s.sysctls = make(map[string]string)
	}
	s.sysctls[key] = v
	return nil
}

// Sysctl returns a settable sysctl's value ("" for an unknown key).
func (s *Settings) Sysctl(key string) string {
	if a, ok := sysctlAliases[key]; ok {
		key = a
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.sysctls[key]; ok {
		return v
	}
	return settableSysctls[key].def
}

// SetIDMaps sets the user namespace's uid and gid maps. Without them,
// /proc shows the identity map of every id, as Linux's initial namespace.
func (s *Settings) SetIDMaps(uid, gid []IDMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uidMap = append([]IDMap(nil), uid...)
	s.gidMap = append([]IDMap(nil), gid...)
}

// idMapText is the text of uid_map (or gid_map, if gid).
func (s *Settings) idMapText(gid bool) string {
	s.mu.Lock()
	m := s.uidMap
	if gid {
		m = s.gidMap
	}
	s.mu.Unlock()
	if len(m) == 0 {
		return identityIDMapText
	}
	var b strings.Builder
	for _, e := range m {
		fmt.Fprintf(&b, "%10d %10d %10d\n", e.ContainerID, e.HostID, e.Size)
	}
	return b.String()
}

// identityIDMapText is the map of the initial user namespace.
const identityIDMapText = "         0          0 4294967295\n"

// addSettableSysctls adds the settable sysctls' files to the /proc/sys
// tree dirs (keyed by the directory's dotted name, "" for /proc/sys),
// making the directories they need. A value reads fresh at each open and
// root writes it.
func addSettableSysctls(set *Settings, dirs map[string]map[string]fs.Node) {
	keys := make([]string, 0, len(settableSysctls))
	for k := range settableSysctls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		key := key
		p := sysctlPath(key)
		for i := 1; i < len(p); i++ {
			d := strings.Join(p[:i], ".")
			if dirs[d] == nil {
				dirs[d] = make(map[string]fs.Node)
			}
		}
		dirs[strings.Join(p[:len(p)-1], ".")][p[len(p)-1]] = sysctlValue(
			func() string { return set.Sysctl(key) },
			func(_ fs.Context, v string) error { return set.SetSysctl(key, v) })
	}
}

// sysctlTree makes the /proc/sys directory from dirs, the entries of each
// directory by dotted name ("" for /proc/sys itself), deepest first so
// every directory is complete when its parent takes it.
func sysctlTree(dirs map[string]map[string]fs.Node) fs.Node {
	names := make([]string, 0, len(dirs))
	for n := range dirs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := strings.Count(names[i], "."), strings.Count(names[j], ".")
		if di != dj {
			return di > dj
		}
		return names[i] > names[j]
	})
	for _, n := range names {
		if n == "" {
			continue
		}
		parent, base := "", n
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			parent, base = n[:i], n[i+1:]
		}
		if dirs[parent] == nil {
			dirs[parent] = make(map[string]fs.Node)
		}
		dirs[parent][base] = synth.NewDir(0o555, dirs[n])
	}
	return synth.NewDir(0o555, dirs[""])
}
