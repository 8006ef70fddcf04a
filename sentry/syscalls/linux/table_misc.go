package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// miscSyscalls are the entries for identity, prctl, scheduling, resource
// limits, UTS names, randomness, sysinfo and sessions. The main table
// (linux64.go) merges them.
func miscSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		// Identity (sys_identity.go).
		unix.SYS_GETUID:    {Name: "getuid", Fn: Getuid, Support: kernel.SupportFull},
		unix.SYS_GETEUID:   {Name: "geteuid", Fn: Geteuid, Support: kernel.SupportFull},
		unix.SYS_GETGID:    {Name: "getgid", Fn: Getgid, Support: kernel.SupportFull},
		unix.SYS_GETEGID:   {Name: "getegid", Fn: Getegid, Support: kernel.SupportFull},
		unix.SYS_SETUID:    {Name: "setuid", Fn: Setuid, Support: kernel.SupportPartial, Note: "RLIMIT_NPROC is not checked"},
		unix.SYS_SETGID:    {Name: "setgid", Fn: Setgid, Support: kernel.SupportFull},
		unix.SYS_SETREUID:  {Name: "setreuid", Fn: Setreuid, Support: kernel.SupportPartial, Note: "RLIMIT_NPROC is not checked"},
		unix.SYS_SETREGID:  {Name: "setregid", Fn: Setregid, Support: kernel.SupportFull},
		unix.SYS_SETRESUID: {Name: "setresuid", Fn: Setresuid, Support: kernel.SupportPartial, Note: "RLIMIT_NPROC is not checked"},
		unix.SYS_SETRESGID: {Name: "setresgid", Fn: Setresgid, Support: kernel.SupportFull},
		unix.SYS_GETRESUID: {Name: "getresuid", Fn: Getresuid, Support: kernel.SupportFull},
		unix.SYS_GETRESGID: {Name: "getresgid", Fn: Getresgid, Support: kernel.SupportFull},
		unix.SYS_SETFSUID:  {Name: "setfsuid", Fn: Setfsuid, Support: kernel.SupportFull},
		unix.SYS_SETFSGID:  {Name: "setfsgid", Fn: Setfsgid, Support: kernel.SupportFull},
		unix.SYS_GETGROUPS: {Name: "getgroups", Fn: Getgroups, Support: kernel.SupportFull},
		unix.SYS_SETGROUPS: {Name: "setgroups", Fn: Setgroups, Support: kernel.SupportFull},
		unix.SYS_CAPGET:    {Name: "capget", Fn: Capget, Support: kernel.SupportFull},
		unix.SYS_CAPSET:    {Name: "capset", Fn: Capset, Support: kernel.SupportFull},

		// prctl (sys_prctl.go).
		unix.SYS_PRCTL: {Name: "prctl", Fn: Prctl, Support: kernel.SupportPartial,
			Note: "PR_SET_MM, PR_SET_VMA, PR_SET_TSC(PR_TSC_SIGSEGV) and securebits other than KEEP_CAPS unsupported; timer slack, THP and MCE settings are stored only"},

		// Scheduling (sys_sched.go).
		unix.SYS_SCHED_YIELD:            {Name: "sched_yield", Fn: SchedYield, Support: kernel.SupportFull},
		unix.SYS_SCHED_GETAFFINITY:      {Name: "sched_getaffinity", Fn: SchedGetaffinity, Support: kernel.SupportFull},
		unix.SYS_SCHED_SETAFFINITY:      {Name: "sched_setaffinity", Fn: SchedSetaffinity, Support: kernel.SupportPartial, Note: "the mask is stored and reported; tasks run on any CPU"},
		unix.SYS_GETCPU:                 {Name: "getcpu", Fn: Getcpu, Support: kernel.SupportPartial, Note: "reports the lowest CPU of the task's affinity mask"},
		unix.SYS_SCHED_GETSCHEDULER:     {Name: "sched_getscheduler", Fn: SchedGetscheduler, Support: kernel.SupportFull},
		unix.SYS_SCHED_SETSCHEDULER:     {Name: "sched_setscheduler", Fn: SchedSetscheduler, Support: kernel.SupportPartial, Note: "policies and priorities are stored and reported, not enforced"},
		unix.SYS_SCHED_GETPARAM:         {Name: "sched_getparam", Fn: SchedGetparam, Support: kernel.SupportFull},
		unix.SYS_SCHED_SETPARAM:         {Name: "sched_setparam", Fn: SchedSetparam, Support: kernel.SupportPartial, Note: "priorities are stored and reported, not enforced"},
		unix.SYS_SCHED_GET_PRIORITY_MAX: {Name: "sched_get_priority_max", Fn: SchedGetPriorityMax, Support: kernel.SupportFull},
		unix.SYS_SCHED_GET_PRIORITY_MIN: {Name: "sched_get_priority_min", Fn: SchedGetPriorityMin, Support: kernel.SupportFull},
		unix.SYS_SCHED_RR_GET_INTERVAL:  {Name: "sched_rr_get_interval", Fn: SchedRrGetInterval, Support: kernel.SupportFull},
		unix.SYS_SCHED_GETATTR:          {Name: "sched_getattr", Fn: SchedGetattr, Support: kernel.SupportFull},
		unix.SYS_SCHED_SETATTR:          {Name: "sched_setattr", Fn: SchedSetattr, Support: kernel.SupportPartial, Note: "SCHED_DEADLINE refused (EPERM), utilization clamps unsupported (EOPNOTSUPP); values are not enforced"},
		unix.SYS_GETPRIORITY:            {Name: "getpriority", Fn: Getpriority, Support: kernel.SupportFull},
		unix.SYS_SETPRIORITY:            {Name: "setpriority", Fn: Setpriority, Support: kernel.SupportPartial, Note: "nice values are stored and reported, not enforced"},
		unix.SYS_IOPRIO_GET:             {Name: "ioprio_get", Fn: IoprioGet, Support: kernel.SupportFull},
		unix.SYS_IOPRIO_SET:             {Name: "ioprio_set", Fn: IoprioSet, Support: kernel.SupportPartial, Note: "I/O priorities are stored and reported, not enforced"},

		// Resource limits (sys_rlimit.go).
		unix.SYS_GETRLIMIT: {Name: "getrlimit", Fn: Getrlimit, Support: kernel.SupportFull},
		unix.SYS_SETRLIMIT: {Name: "setrlimit", Fn: Setrlimit, Support: kernel.SupportPartial, Note: "RLIMIT_NOFILE and RLIMIT_STACK take effect; other limits are stored and reported only"},
		unix.SYS_PRLIMIT64: {Name: "prlimit64", Fn: Prlimit64, Support: kernel.SupportPartial, Note: "RLIMIT_NOFILE and RLIMIT_STACK take effect; other limits are stored and reported only"},

		// UTS names and personality (sys_uts.go).
		unix.SYS_UNAME:         {Name: "uname", Fn: Uname, Support: kernel.SupportFull},
		unix.SYS_SETHOSTNAME:   {Name: "sethostname", Fn: Sethostname, Support: kernel.SupportFull},
		unix.SYS_SETDOMAINNAME: {Name: "setdomainname", Fn: Setdomainname, Support: kernel.SupportFull},
		unix.SYS_PERSONALITY:   {Name: "personality", Fn: Personality, Support: kernel.SupportPartial, Note: "UNAME26 (uname) and READ_IMPLIES_EXEC (mmap, mprotect, shmat; not brk or the stack) act; other flags are stored and inherited only"},

		// Randomness and system information (sys_random.go, sys_sysinfo.go).
		unix.SYS_GETRANDOM: {Name: "getrandom", Fn: Getrandom, Support: kernel.SupportFull},
		unix.SYS_SYSINFO:   {Name: "sysinfo", Fn: Sysinfo, Support: kernel.SupportPartial, Note: "load averages are 0; no swap"},

		// Sessions and process groups (sys_session.go).
		unix.SYS_GETPGID: {Name: "getpgid", Fn: Getpgid, Support: kernel.SupportFull},
		unix.SYS_SETPGID: {Name: "setpgid", Fn: Setpgid, Support: kernel.SupportFull},
		unix.SYS_GETPGRP: {Name: "getpgrp", Fn: Getpgrp, Support: kernel.SupportFull},
		unix.SYS_GETSID:  {Name: "getsid", Fn: Getsid, Support: kernel.SupportFull},
		unix.SYS_SETSID:  {Name: "setsid", Fn: Setsid, Support: kernel.SupportFull},

		// Privileged operations a container is not given.
		unix.SYS_ACCT:    {Name: "acct", Support: kernel.SupportUnimplemented, Errno: unix.EPERM, Note: "process accounting is not available in the sandbox"},
		unix.SYS_SYSLOG:  {Name: "syslog", Support: kernel.SupportUnimplemented, Errno: unix.EPERM, Note: "the kernel log is not readable in the sandbox, as under Docker's defaults"},
		unix.SYS_VHANGUP: {Name: "vhangup", Support: kernel.SupportUnimplemented, Errno: unix.EPERM, Note: "needs CAP_SYS_TTY_CONFIG, which the sandbox does not give"},
		unix.SYS_REBOOT:  {Name: "reboot", Support: kernel.SupportUnimplemented, Errno: unix.EPERM, Note: "rebooting the sandbox's PID namespace is not supported"},
	}
}
