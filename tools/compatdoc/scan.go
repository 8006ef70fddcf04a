package main

import (
	"regexp"
	"sort"
	"strings"
)

// aliases maps C library functions the conformance programs call to the
// system calls glibc 2.36 makes for them on amd64, where that differs from
// the function's name (fork is clone, stat is newfstatat, ...). A name
// listed here counts only as its aliases.
var aliases = map[string][]string{
	"fork":                  {"clone"},
	"open":                  {"openat"},
	"creat":                 {"openat"},
	"stat":                  {"newfstatat"},
	"lstat":                 {"newfstatat"},
	"fstat":                 {"newfstatat"},
	"nanosleep":             {"clock_nanosleep"},
	"sigaction":             {"rt_sigaction", "rt_sigreturn"},
	"signal":                {"rt_sigaction", "rt_sigreturn"},
	"sigprocmask":           {"rt_sigprocmask"},
	"pthread_sigmask":       {"rt_sigprocmask"},
	"sigpending":            {"rt_sigpending"},
	"sigsuspend":            {"rt_sigsuspend"},
	"sigtimedwait":          {"rt_sigtimedwait"},
	"sigwaitinfo":           {"rt_sigtimedwait"},
	"sigwait":               {"rt_sigtimedwait"},
	"sigqueue":              {"rt_sigqueueinfo"},
	"raise":                 {"tgkill"},
	"pthread_kill":          {"tgkill"},
	"killpg":                {"kill"},
	"waitpid":               {"wait4"},
	"wait":                  {"wait4"},
	"pread":                 {"pread64"},
	"pwrite":                {"pwrite64"},
	"fstatat":               {"newfstatat"},
	"prlimit":               {"prlimit64"},
	"getdents":              {"getdents64"},
	"opendir":               {"openat", "getdents64"},
	"readdir":               {"getdents64"},
	"fopen":                 {"openat"},
	"sleep":                 {"clock_nanosleep"},
	"usleep":                {"clock_nanosleep"},
	"pthread_create":        {"clone3", "clone"},
	"posix_spawn":           {"clone3", "clone", "execve"},
	"execv":                 {"execve"},
	"execvp":                {"execve"},
	"execl":                 {"execve"},
	"execlp":                {"execve"},
	"fexecve":               {"execveat"},
	"timer_create":          {"timer_create"},
	"mkfifo":                {"mknodat"},
	"tcgetpgrp":             {"ioctl"},
	"tcsetpgrp":             {"ioctl"},
	"tcgetattr":             {"ioctl"},
	"tcsetattr":             {"ioctl"},
	"isatty":                {"ioctl"},
	"eventfd":               {"eventfd2"},
	"mq_getattr":            {"mq_getsetattr"},
	"mq_setattr":            {"mq_getsetattr"},
	"mq_send":               {"mq_timedsend"},
	"mq_receive":            {"mq_timedreceive"},
	"epoll_create":          {"epoll_create"},
	"inotify_init":          {"inotify_init1"},
	"dup3":                  {"dup3"},
	"setpgrp":               {"setpgid"},
	"getpgrp":               {"getpgrp"},
	"nice":                  {"setpriority", "getpriority"},
	"clock_getcpuclockid":   {"clock_getres"},
	"pthread_getcpuclockid": {"clock_gettime"},
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	stringLit    = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)
	sysConst     = regexp.MustCompile(`\bSYS_([a-z0-9_]+)\b`)
	callSite     = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	word         = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*\b`)
	funcStart    = regexp.MustCompile(`^(?:static\s+)?(?:inline\s+)?[A-Za-z_][A-Za-z0-9_ \t\*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*$`)
	macroCase    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)
	caseEntry    = regexp.MustCompile(`MT_CASE\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)`)
)

// cleanC removes comments and string literals so that words in them do
// not count as calls.
func cleanC(src string) string {
	src = blockComment.ReplaceAllString(src, " ")
	src = lineComment.ReplaceAllString(src, " ")
	return stringLit.ReplaceAllString(src, `""`)
}

// program is one scanned conformance program.
type program struct {
	name  string
	cases []string            // in table order
	funcs map[string]string   // top-level function name -> body
	calls map[string][]string // case -> syscalls it exercises, sorted
}

// functions splits cleaned C source into its top-level function bodies,
// relying on the suite's style: a definition starts at column 0 and its
// body ends with a "}" at column 0.
func functions(src string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		m := funcStart.FindStringSubmatch(lines[i])
		if mm := macroCase.FindStringSubmatch(lines[i]); mm != nil {
			// A case defined through a macro, as IN_CHILD(name)
			// { body }: the body counts for the case name.
			m = mm
		}
		if m == nil || strings.HasPrefix(lines[i], " ") || strings.HasPrefix(lines[i], "\t") {
			continue
		}
		// The body starts at the first line beginning with "{" (a
		// signature may span lines); a ";" first means a prototype.
		j := i
		for ; j < len(lines) && j < i+6; j++ {
			if strings.HasPrefix(lines[j], "{") {
				break
			}
			if strings.HasSuffix(strings.TrimSpace(lines[j]), ";") {
				j = len(lines)
			}
		}
		if j >= len(lines) || j == i+6 {
			continue
		}
		var body []string
		for k := j; k < len(lines); k++ {
			body = append(body, lines[k])
			if k > i && lines[k] == "}" {
				i = k
				break
			}
		}
		out[m[1]] = strings.Join(body, "\n")
	}
	return out
}

// called returns the syscall names (known to isSyscall) and the local
// functions called in body.
func called(body string, isSyscall func(string) bool, funcs map[string]string) (sys, local []string) {
	for _, m := range sysConst.FindAllStringSubmatch(body, -1) {
		if isSyscall(m[1]) {
			sys = append(sys, m[1])
		}
	}
	// A local function counts when it is named at all: called, or
	// passed as a thread start routine or signal handler.
	for _, w := range word.FindAllString(body, -1) {
		if _, ok := funcs[w]; ok {
			local = append(local, w)
		}
	}
	for _, m := range callSite.FindAllStringSubmatch(body, -1) {
		name := m[1]
		if _, ok := funcs[name]; ok {
			continue
		}
		if a, ok := aliases[name]; ok {
			sys = append(sys, a...)
		} else if isSyscall(name) {
			sys = append(sys, name)
		}
	}
	return sys, local
}

// scanProgram finds, for each case of a program, the syscalls its function
// and the local helpers it calls (transitively) name.
func scanProgram(name, src string, isSyscall func(string) bool) *program {
	clean := cleanC(src)
	p := &program{name: name, funcs: functions(clean), calls: map[string][]string{}}
	for _, m := range caseEntry.FindAllStringSubmatch(clean, -1) {
		p.cases = append(p.cases, m[1])
	}
	for _, c := range p.cases {
		set := map[string]bool{}
		seen := map[string]bool{}
		var walk func(fn string)
		walk = func(fn string) {
			if seen[fn] {
				return
			}
			seen[fn] = true
			sys, local := called(p.funcs[fn], isSyscall, p.funcs)
			for _, s := range sys {
				if isSyscall(s) {
					set[s] = true
				}
			}
			for _, l := range local {
				walk(l)
			}
		}
		walk(c)
		var list []string
		for s := range set {
			list = append(list, s)
		}
		sort.Strings(list)
		p.calls[c] = list
	}
	return p
}
