package strace

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// flagTables and nameTables are every table the decoder prints names
// from, so that TestConstantsMatchUnix can check their values.
var flagTables = map[string][]flag{
	"openFlagTab": openFlagTab, "atFlagTab": atFlagTab, "unlinkFlagTab": unlinkFlagTab,
	"accessAtFlagTab": accessAtFlagTab, "accessModeTab": accessModeTab,
	"statxMaskTab": statxMaskTab, "statxAttrTab": statxAttrTab, "modeSpecialTab": modeSpecialTab,
	"renameFlagTab": renameFlagTab, "flockTab": flockTab, "mountFlagTab": mountFlagTab,
	"umountFlagTab": umountFlagTab, "closeRangeTab": closeRangeTab, "eventfdTab": eventfdTab,
	"timerfdTab": timerfdTab, "epollCreateTab": epollCreateTab, "memfdTab": memfdTab,
	"signalfdTab": signalfdTab, "inotifyTab": inotifyTab, "getrandomTab": getrandomTab,
	"protTab": protTab, "mapFlagTab": mapFlagTab, "mremapTab": mremapTab, "msyncTab": msyncTab,
	"mlockallTab": mlockallTab, "clone3FlagTab": clone3FlagTab, "waitOptionTab": waitOptionTab,
	"timerFlagTab": timerFlagTab, "timerfdSetTab": timerfdSetTab, "epollEventTab": epollEventTab,
	"pollEventTab": pollEventTab, "saFlagTab": saFlagTab, "ssFlagTab": ssFlagTab,
	"resolveTab": resolveTab, "sockFlagTab": sockFlagTab, "msgFlagTab": msgFlagTab,
	"fdFlagTab": fdFlagTab, "sealTab": sealTab, "dnotifyTab": dnotifyTab,
	"termiosIflagTab": termiosIflagTab, "termiosOflagTab": termiosOflagTab,
	"termiosLflagTab": termiosLflagTab, "termiosCflagTab": termiosCflagTab,
}

var nameTables = map[string]names{
	"accModes": accModes(), "statxSync": statxSync(), "fileTypes": fileTypes(), "seekWhence": seekWhence(),
	"mapTypes": mapTypes(), "madvise": madvise(), "idTypes": idTypes(), "rlimits": rlimits(),
	"rusageWho": rusageWho(), "clocks": clocks(), "itimers": itimers(), "archPrctl": archPrctl(),
	"capabilities": capabilities(), "epollOps": epollOps(), "sigHows": sigHows(),
	"ptraceEvents": ptraceEvents(), "families": families(), "sockTypes": sockTypes(),
	"ipProtocols": ipProtocols(), "netlinkProtocols": netlinkProtocols(), "shutdownHows": shutdownHows(),
	"sockLevels": sockLevels(), "socketOptions": socketOptions(), "tcpOptions": tcpOptions(),
	"ipOptions": ipOptions(), "ipv6Options": ipv6Options(), "fcntlCmds": fcntlCmds(),
	"lockTypes": lockTypes(), "prctlOptions": prctlOptions(), "seccompModes": seccompModes(),
	"capAmbientOps": capAmbientOps(), "ioctlReqs": ioctlReqs(), "baudRates": baudRates(),
}

// sameValue compares a table's value with x/sys/unix's, which spells
// 32-bit values like RUSAGE_CHILDREN as negative numbers.
func sameValue(table uint64, u int64) bool {
	return table == uint64(u) || table <= 0xffffffff && uint32(table) == uint32(u)
}

// kernelValues are names whose value the kernel's ABI gives differently
// from x/sys/unix: unix.O_LARGEFILE is glibc's 0 on 64-bit, but the kernel
// reports (and strace prints) its own 0x8000 in F_GETFL results.
var kernelValues = map[string]bool{"O_LARGEFILE": true}

func TestConstantsMatchUnix(t *testing.T) {
	checked := 0
	for tab, flags := range flagTables {
		for _, f := range flags {
			if u, ok := unixConsts[f.name]; ok && !kernelValues[f.name] {
				checked++
				if !sameValue(f.v, u) {
					t.Errorf("%s: %s = %#x, x/sys/unix has %#x", tab, f.name, f.v, u)
				}
			}
		}
	}
	for tab, ns := range nameTables {
		for v, name := range ns {
			if u, ok := unixConsts[name]; ok {
				checked++
				if !sameValue(v, u) {
					t.Errorf("%s: %s = %#x, x/sys/unix has %#x", tab, name, v, u)
				}
			}
		}
	}
	if checked < 700 {
		t.Errorf("checked only %d names against x/sys/unix", checked)
	}
}

func TestTable(t *testing.T) {
	highest := uintptr(0)
	for nr := uintptr(0); nr < MaxSyscall; nr++ {
		name, args := Signature(nr)
		if name == "" {
			if len(args) != 0 {
				t.Errorf("unnamed syscall %d has arguments", nr)
			}
			continue
		}
		highest = nr
		if len(args) > 6 {
			t.Errorf("%s has %d arguments", name, len(args))
		}
		for _, k := range args {
			if k >= numKinds || k.String() == "kind?" {
				t.Errorf("%s has an argument of unknown kind %d", name, k)
			}
		}
		if got, ok := Number(name); !ok || got != nr {
			t.Errorf("Number(%q) = %d, %v; want %d", name, got, ok, nr)
		}
	}
	if highest+1 != MaxSyscall {
		t.Errorf("MaxSyscall = %d, highest named syscall is %d", MaxSyscall, highest)
	}
	if Name(MaxSyscall) != "" || Name(^uintptr(0)) != "" {
		t.Error("Name past the table is not empty")
	}
	if _, ok := Number("no_such_syscall"); ok {
		t.Error("Number found no_such_syscall")
	}
	if name, args := Signature(MaxSyscall + 5); name != "" || args != nil {
		t.Error("Signature past the table is not empty")
	}
	// Every named syscall is one x/sys/unix knows, and the other way round.
	if len(unixSyscalls) != len(byName()) {
		t.Errorf("table names %d syscalls, x/sys/unix %d", len(byName()), len(unixSyscalls))
	}
}

func TestSignatures(t *testing.T) {
	tests := []struct {
		nr   uintptr
		name string
		args string
	}{
		{unix.SYS_READ, "read", "fd outbuf ulong"},
		{unix.SYS_OPENAT, "openat", "dirfd path openflags openmode"},
		{unix.SYS_MMAP, "mmap", "pointer ulong prot mmapflags fd hex"},
		{unix.SYS_EXECVE, "execve", "path argv envp"},
		{unix.SYS_GETPID, "getpid", ""},
		{unix.SYS_FUTEX, "futex", "pointer futexop int timespec pointer int"},
		{unix.SYS_PREADV2, "preadv2", "fd outiovec int long unused hex"},
		{unix.SYS_MSEAL, "mseal", "pointer ulong hex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, args := Signature(tt.nr)
			var kinds []string
			for _, k := range args {
				kinds = append(kinds, k.String())
			}
			if name != tt.name || strings.Join(kinds, " ") != tt.args {
				t.Errorf("Signature(%d) = %s(%s), want %s(%s)", tt.nr, name, strings.Join(kinds, " "), tt.name, tt.args)
			}
		})
	}
	if ArgKind(numKinds).String() != "kind?" {
		t.Error("an out-of-range kind has a name")
	}
}

// TestEveryCall formats every syscall with plausible arguments in
// readable memory and checks the line has the name and argument count
// the table gives.
func TestEveryCall(t *testing.T) {
	m := newMem()
	buf := m.put(make([]byte, 8192))
	for nr := uintptr(0); nr < MaxSyscall; nr++ {
		name, args := Signature(nr)
		if name == "" {
			continue
		}
		var av [6]uintptr
		for i := range av {
			av[i] = uintptr(buf)
		}
		entry := Entry(m, nr, av)
		if !strings.HasPrefix(entry, name+"(") || !strings.HasSuffix(entry, ")") {
			t.Errorf("Entry of %s = %q", name, entry)
		}
		exit := Exit(m, nr, av, 0)
		if !strings.HasPrefix(exit, entry[:len(name)+1]) {
			t.Errorf("Exit of %s = %q", name, exit)
		}
		if table[nr].fmt == nil {
			// With no custom formatter, the line has one comma-separated
			// argument per printed kind.
			want := 0
			for i, k := range args {
				if k == Skip || k == OpenMode && !needsMode(uint64(av[i-1])) {
					continue
				}
				want++
			}
			if got := countTopLevelArgs(entry[len(name):]); got != want {
				t.Errorf("%s: %d arguments in %q, want %d", name, got, entry, want)
			}
		}
	}
}

// countTopLevelArgs counts the arguments in "(a, {b, c}, "d, e")".
func countTopLevelArgs(s string) int {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	if s == "" {
		return 0
	}
	depth, n, inStr := 0, 1, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case c == ',' && depth == 0:
			n++
		}
	}
	return n
}

func TestErrnoString(t *testing.T) {
	tests := []struct {
		e    uint64
		want string
	}{
		{uint64(unix.ENOENT), "ENOENT (No such file or directory)"},
		{uint64(unix.EAGAIN), "EAGAIN (Resource temporarily unavailable)"},
		{uint64(unix.EOPNOTSUPP), "EOPNOTSUPP (Operation not supported)"},
		{uint64(unix.EUCLEAN), "EUCLEAN (Structure needs cleaning)"},
		{uint64(unix.EHWPOISON), "EHWPOISON (Memory page has hardware error)"},
		{512, "ERESTARTSYS (To be restarted if SA_RESTART is set)"},
		{134, "E??? (errno 134)"},
	}
	for _, tt := range tests {
		if got := ErrnoString(tt.e); got != tt.want {
			t.Errorf("ErrnoString(%d) = %q, want %q", tt.e, got, tt.want)
		}
	}
	// Every errno Linux has prints a name and a text.
	for e := uint64(1); e < 134; e++ {
		if e == 41 || e == 58 {
			continue // EWOULDBLOCK/EDEADLOCK slots Linux leaves unused.
		}
		s := ErrnoString(e)
		if strings.HasPrefix(s, "E???") || !strings.Contains(s, " (") {
			t.Errorf("errno %d prints %q", e, s)
		}
	}
}
