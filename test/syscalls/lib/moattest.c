/* moattest: case runner, reporting and errno/signal names. See moattest.h. */
#include "moattest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *mt_argv0;

static int cur_failed;
static int cur_skipped;
static char cur_msg[512];

/* Errno names, indexed by number. Aliases (EWOULDBLOCK, EDEADLOCK,
 * ENOTSUP) share a number with the name shown. */
static const char *const errnames[] = {
	[0] = "0",
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[ESRCH] = "ESRCH",
	[EINTR] = "EINTR",
	[EIO] = "EIO",
	[ENXIO] = "ENXIO",
	[E2BIG] = "E2BIG",
	[ENOEXEC] = "ENOEXEC",
	[EBADF] = "EBADF",
	[ECHILD] = "ECHILD",
	[EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EFAULT] = "EFAULT",
	[ENOTBLK] = "ENOTBLK",
	[EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE",
	[ENOTTY] = "ENOTTY",
	[ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG",
	[ENOSPC] = "ENOSPC",
	[ESPIPE] = "ESPIPE",
	[EROFS] = "EROFS",
	[EMLINK] = "EMLINK",
	[EPIPE] = "EPIPE",
	[EDOM] = "EDOM",
	[ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK",
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS",
	[ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP",
	[ENOMSG] = "ENOMSG",
	[EIDRM] = "EIDRM",
	[ECHRNG] = "ECHRNG",
	[EL2NSYNC] = "EL2NSYNC",
	[EL3HLT] = "EL3HLT",
	[EL3RST] = "EL3RST",
	[ELNRNG] = "ELNRNG",
	[EUNATCH] = "EUNATCH",
	[ENOCSI] = "ENOCSI",
	[EL2HLT] = "EL2HLT",
	[EBADE] = "EBADE",
	[EBADR] = "EBADR",
	[EXFULL] = "EXFULL",
	[ENOANO] = "ENOANO",
	[EBADRQC] = "EBADRQC",
	[EBADSLT] = "EBADSLT",
	[EBFONT] = "EBFONT",
	[ENOSTR] = "ENOSTR",
	[ENODATA] = "ENODATA",
	[ETIME] = "ETIME",
	[ENOSR] = "ENOSR",
	[ENONET] = "ENONET",
	[ENOPKG] = "ENOPKG",
	[EREMOTE] = "EREMOTE",
	[ENOLINK] = "ENOLINK",
	[EADV] = "EADV",
	[ESRMNT] = "ESRMNT",
	[ECOMM] = "ECOMM",
	[EPROTO] = "EPROTO",
	[EMULTIHOP] = "EMULTIHOP",
	[EDOTDOT] = "EDOTDOT",
	[EBADMSG] = "EBADMSG",
	[EOVERFLOW] = "EOVERFLOW",
	[ENOTUNIQ] = "ENOTUNIQ",
	[EBADFD] = "EBADFD",
	[EREMCHG] = "EREMCHG",
	[ELIBACC] = "ELIBACC",
	[ELIBBAD] = "ELIBBAD",
	[ELIBSCN] = "ELIBSCN",
	[ELIBMAX] = "ELIBMAX",
	[ELIBEXEC] = "ELIBEXEC",
	[EILSEQ] = "EILSEQ",
	[ERESTART] = "ERESTART",
	[ESTRPIPE] = "ESTRPIPE",
	[EUSERS] = "EUSERS",
	[ENOTSOCK] = "ENOTSOCK",
	[EDESTADDRREQ] = "EDESTADDRREQ",
	[EMSGSIZE] = "EMSGSIZE",
	[EPROTOTYPE] = "EPROTOTYPE",
	[ENOPROTOOPT] = "ENOPROTOOPT",
	[EPROTONOSUPPORT] = "EPROTONOSUPPORT",
	[ESOCKTNOSUPPORT] = "ESOCKTNOSUPPORT",
	[EOPNOTSUPP] = "EOPNOTSUPP",
	[EPFNOSUPPORT] = "EPFNOSUPPORT",
	[EAFNOSUPPORT] = "EAFNOSUPPORT",
	[EADDRINUSE] = "EADDRINUSE",
	[EADDRNOTAVAIL] = "EADDRNOTAVAIL",
	[ENETDOWN] = "ENETDOWN",
	[ENETUNREACH] = "ENETUNREACH",
	[ENETRESET] = "ENETRESET",
	[ECONNABORTED] = "ECONNABORTED",
	[ECONNRESET] = "ECONNRESET",
	[ENOBUFS] = "ENOBUFS",
	[EISCONN] = "EISCONN",
	[ENOTCONN] = "ENOTCONN",
	[ESHUTDOWN] = "ESHUTDOWN",
	[ETOOMANYREFS] = "ETOOMANYREFS",
	[ETIMEDOUT] = "ETIMEDOUT",
	[ECONNREFUSED] = "ECONNREFUSED",
	[EHOSTDOWN] = "EHOSTDOWN",
	[EHOSTUNREACH] = "EHOSTUNREACH",
	[EALREADY] = "EALREADY",
	[EINPROGRESS] = "EINPROGRESS",
	[ESTALE] = "ESTALE",
	[EUCLEAN] = "EUCLEAN",
	[ENOTNAM] = "ENOTNAM",
	[ENAVAIL] = "ENAVAIL",
	[EISNAM] = "EISNAM",
	[EREMOTEIO] = "EREMOTEIO",
	[EDQUOT] = "EDQUOT",
	[ENOMEDIUM] = "ENOMEDIUM",
	[EMEDIUMTYPE] = "EMEDIUMTYPE",
	[ECANCELED] = "ECANCELED",
	[ENOKEY] = "ENOKEY",
	[EKEYEXPIRED] = "EKEYEXPIRED",
	[EKEYREVOKED] = "EKEYREVOKED",
	[EKEYREJECTED] = "EKEYREJECTED",
	[EOWNERDEAD] = "EOWNERDEAD",
	[ENOTRECOVERABLE] = "ENOTRECOVERABLE",
	[ERFKILL] = "ERFKILL",
	[EHWPOISON] = "EHWPOISON",
};

const char *mt_errname(int err)
{
	static __thread char buf[32];
	if (err >= 0 && (size_t)err < MT_NCASES(errnames) && errnames[err])
		return errnames[err];
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static const char *const signames[] = {
	[SIGHUP] = "SIGHUP",     [SIGINT] = "SIGINT",
	[SIGQUIT] = "SIGQUIT",   [SIGILL] = "SIGILL",
	[SIGTRAP] = "SIGTRAP",   [SIGABRT] = "SIGABRT",
	[SIGBUS] = "SIGBUS",     [SIGFPE] = "SIGFPE",
	[SIGKILL] = "SIGKILL",   [SIGUSR1] = "SIGUSR1",
	[SIGSEGV] = "SIGSEGV",   [SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE",   [SIGALRM] = "SIGALRM",
	[SIGTERM] = "SIGTERM",   [SIGSTKFLT] = "SIGSTKFLT",
	[SIGCHLD] = "SIGCHLD",   [SIGCONT] = "SIGCONT",
	[SIGSTOP] = "SIGSTOP",   [SIGTSTP] = "SIGTSTP",
	[SIGTTIN] = "SIGTTIN",   [SIGTTOU] = "SIGTTOU",
	[SIGURG] = "SIGURG",     [SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ",   [SIGVTALRM] = "SIGVTALRM",
	[SIGPROF] = "SIGPROF",   [SIGWINCH] = "SIGWINCH",
	[SIGIO] = "SIGIO",       [SIGPWR] = "SIGPWR",
	[SIGSYS] = "SIGSYS",
};

const char *mt_signame(int sig)
{
	static __thread char buf[32];
	if (sig > 0 && (size_t)sig < MT_NCASES(signames) && signames[sig])
		return signames[sig];
	if (sig >= 32 && sig <= 64)
		snprintf(buf, sizeof(buf), "SIGRTMIN+%d", sig - 32);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

const char *mt_status_str(int status)
{
	static __thread char buf[64];
	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by %s%s",
			 mt_signame(WTERMSIG(status)),
			 WCOREDUMP(status) ? " (core)" : "");
	else if (WIFSTOPPED(status))
		snprintf(buf, sizeof(buf), "stopped by %s",
			 mt_signame(WSTOPSIG(status)));
	else if (WIFCONTINUED(status))
		snprintf(buf, sizeof(buf), "continued");
	else
		snprintf(buf, sizeof(buf), "status 0x%x", status);
	return buf;
}

/* out writes a whole line to fd 1, retrying short writes. */
static void out(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

/* oneline replaces newlines so a message stays on its TAP line. */
static void oneline(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

void mt_fail(const char *file, int line, const char *fmt, ...)
{
	int saved = errno;
	if (cur_failed || cur_skipped) {
		errno = saved;
		return;
	}
	cur_failed = 1;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	int n = snprintf(cur_msg, sizeof(cur_msg), "%s:%d: ", base, line);
	if (n < 0 || (size_t)n >= sizeof(cur_msg))
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cur_msg + n, sizeof(cur_msg) - (size_t)n, fmt, ap);
	va_end(ap);
	oneline(cur_msg);
	errno = saved;
}

void mt_skip(const char *fmt, ...)
{
	if (cur_failed || cur_skipped)
		return;
	cur_skipped = 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cur_msg, sizeof(cur_msg), fmt, ap);
	va_end(ap);
	oneline(cur_msg);
}

int mt_done(void)
{
	return cur_failed || cur_skipped;
}

void mt_note(const char *fmt, ...)
{
	char buf[600];
	buf[0] = '#';
	buf[1] = ' ';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	va_end(ap);
	oneline(buf);
	strcat(buf, "\n");
	out(buf);
}

void mt_child_fail(const char *file, int line, const char *expr, int err)
{
	char buf[600];
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	snprintf(buf, sizeof(buf), "# child %d: %s:%d: expected %s (errno %s)",
		 (int)getpid(), base, line, expr, mt_errname(err));
	oneline(buf);
	strcat(buf, "\n");
	out(buf);
	_exit(MT_CHILD_FAIL);
}

int mt_wait(pid_t pid)
{
	int status;
	for (;;) {
		pid_t r = waitpid(pid, &status, __WALL);
		if (r == pid)
			return status;
		if (r < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

const char *mt_data(const char *name)
{
	static char bufs[8][4096];
	static int next;
	char *b = bufs[next++ % 8];
	const char *dir = getenv("MOAT_TEST_DATA");
	if (dir == NULL || dir[0] == 0)
		dir = "/nonexistent-MOAT_TEST_DATA-is-unset";
	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

int mt_wait_blocked(pid_t tid, int timeout_ms)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (access(path, F_OK) != 0) {
		/* Not a thread of ours: a child process. */
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	}
	int64_t deadline = mt_now_ns() + (int64_t)timeout_ms * 1000000;
	do {
		int fd = open(path, O_RDONLY);
		if (fd < 0 && errno == ENOENT) {
			/* No procfs: fall back to a generous sleep, so the
			 * caller's test does not depend on it. */
			usleep(50000);
			return 0;
		}
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = 0;
				char *p = strrchr(buf, ')');
				if (p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D'))
					return 0;
			}
		}
		usleep(1000);
	} while (mt_now_ns() < deadline);
	return -1;
}

int64_t mt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ssize_t mt_read_n(int fd, void *buf, size_t n, int timeout_ms)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int r = poll(&pf, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return got ? (ssize_t)got : -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* reset restores the state every case may assume at its start. */
static void reset(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < 65; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33)
			continue;
		sigaction(sig, &sa, NULL);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	alarm(0);
	struct itimerval zero;
	memset(&zero, 0, sizeof(zero));
	setitimer(ITIMER_REAL, &zero, NULL);
	setitimer(ITIMER_VIRTUAL, &zero, NULL);
	setitimer(ITIMER_PROF, &zero, NULL);
	stack_t ss;
	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	umask(022);
	if (chdir("/") != 0) {
		/* Nothing better to do: the next case reports it. */
	}
	if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	}
	while (waitpid(-1, NULL, WNOHANG | __WALL) > 0) {
	}
	errno = 0;
}

/* selected reports whether name is in the comma-separated list. */
static int selected(const char *list, const char *name)
{
	if (list == NULL)
		return 1;
	size_t n = strlen(name);
	const char *p = list;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

int mt_main(int argc, char **argv, const struct mt_case *cases, size_t n)
{
	const char *only = NULL;
	mt_argv0 = argv[0];
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else if (strcmp(argv[i], "--list") == 0) {
			for (size_t j = 0; j < n; j++) {
				out(cases[j].name);
				out("\n");
			}
			return 0;
		}
	}
	size_t planned = 0;
	for (size_t j = 0; j < n; j++)
		if (selected(only, cases[j].name))
			planned++;
	char line[800];
	snprintf(line, sizeof(line), "1..%zu\n", planned);
	out(line);
	reset();
	int pass = 0, fail = 0, skip = 0, num = 0;
	for (size_t j = 0; j < n; j++) {
		if (!selected(only, cases[j].name))
			continue;
		num++;
		cur_failed = 0;
		cur_skipped = 0;
		cur_msg[0] = 0;
		cases[j].fn();
		if (cur_failed) {
			fail++;
			snprintf(line, sizeof(line), "not ok %d - %s # %s\n", num,
				 cases[j].name, cur_msg);
		} else if (cur_skipped) {
			skip++;
			snprintf(line, sizeof(line), "ok %d - %s # SKIP %s\n", num,
				 cases[j].name, cur_msg);
		} else {
			pass++;
			snprintf(line, sizeof(line), "ok %d - %s\n", num,
				 cases[j].name);
		}
		out(line);
		reset();
	}
	snprintf(line, sizeof(line), "# moattest: pass %d fail %d skip %d\n",
		 pass, fail, skip);
	out(line);
	return fail ? 1 : 0;
}

int mt_enter_scratch(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "/dev/shm/moat-%s-%d", name, (int)getpid());
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		mt_fail(__FILE__, __LINE__, "mkdir %s: %s", path, mt_errname(errno));
		return -1;
	}
	if (chdir(path) < 0) {
		mt_fail(__FILE__, __LINE__, "chdir %s: %s", path, mt_errname(errno));
		return -1;
	}
	return 0;
}
