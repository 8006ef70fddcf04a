/*
 * moattest: the tiny test library of Moat's syscall conformance programs.
 *
 * A program is a table of cases, each a void function. mt_main runs them in
 * order in one process and prints one TAP-like line per case:
 *
 *   1..N
 *   ok 3 - name
 *   not ok 4 - name # file.c:12: open("/x", O_RDONLY): expected -1 (ENOENT) got 3
 *   ok 5 - name # SKIP reason
 *   # moattest: pass 3 fail 1 skip 1
 *
 * The CHECK macros record the first failure of a case and return from the
 * case function, so they can be used only in functions returning void. In a
 * forked child, use CHILD_CHECK, which prints a "# child ..." line and exits
 * with status MT_CHILD_FAIL (99) for the parent to check.
 *
 * Between cases the runner restores a clean state: default signal
 * dispositions, an empty signal mask, no alarm or interval timer, no
 * alternate signal stack, umask 022, cwd /, descriptors above 2 closed and
 * exited children reaped. Output goes straight to fd 1 with write(2), so a
 * fork never duplicates buffered lines.
 *
 * Arguments: `prog --only NAME[,NAME...]` runs the named cases only;
 * `prog --list` prints the case names.
 */
#ifndef MOATTEST_H
#define MOATTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct mt_case {
	const char *name;
	void (*fn)(void);
};

#define MT_CASE(fn) { #fn, fn }
#define MT_NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define MT_CHILD_FAIL 99

/* MT_MAIN(cases) defines main() running the case table. */
#define MT_MAIN(cases)                                                 \
	int main(int argc, char **argv)                                \
	{                                                              \
		return mt_main(argc, argv, cases, MT_NCASES(cases));   \
	}

int mt_main(int argc, char **argv, const struct mt_case *cases, size_t n);

/* mt_errname returns the symbolic name of an errno value ("ENOENT"). */
const char *mt_errname(int err);
/* mt_signame returns the symbolic name of a signal ("SIGSEGV"). */
const char *mt_signame(int sig);

/* mt_fail records a failure of the current case (the first one is shown). */
void mt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* mt_skip marks the current case skipped with a reason. */
void mt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mt_done reports whether the current case has failed or been skipped. */
int mt_done(void);
/* mt_note prints a "# ..." comment line. */
void mt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mt_child_fail prints a "# child ..." line and _exits with MT_CHILD_FAIL. */
void mt_child_fail(const char *file, int line, const char *expr, int err)
	__attribute__((noreturn));
/* mt_status_str describes a wait status ("exited 3", "killed by SIGKILL"). */
const char *mt_status_str(int status);
/* mt_argv0 is the program's argv[0], for re-executing itself. */
extern const char *mt_argv0;

/* MT_BAIL returns from the case if a called helper failed or skipped it. */
#define MT_BAIL()                 \
	do {                      \
		if (mt_done())    \
			return;   \
	} while (0)

#define SKIP(...)                          \
	do {                               \
		mt_skip(__VA_ARGS__);      \
		return;                    \
	} while (0)

#define FAIL(...)                                         \
	do {                                              \
		mt_fail(__FILE__, __LINE__, __VA_ARGS__); \
		return;                                   \
	} while (0)

/* CHECK(cond): cond must be true. */
#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			int __e = errno;                                    \
			mt_fail(__FILE__, __LINE__, "expected %s (errno %s)", \
				#cond, mt_errname(__e));                    \
			return;                                             \
		}                                                           \
	} while (0)

#define MT_CMP(a, op, b)                                                     \
	do {                                                                 \
		long long __a = (long long)(a), __b = (long long)(b);        \
		if (!(__a op __b)) {                                         \
			mt_fail(__FILE__, __LINE__,                          \
				"expected %s %s %s: got %lld vs %lld", #a,   \
				#op, #b, __a, __b);                          \
			return;                                              \
		}                                                            \
	} while (0)

#define CHECK_EQ(a, b) MT_CMP(a, ==, b)
#define CHECK_NE(a, b) MT_CMP(a, !=, b)
#define CHECK_LT(a, b) MT_CMP(a, <, b)
#define CHECK_LE(a, b) MT_CMP(a, <=, b)
#define CHECK_GT(a, b) MT_CMP(a, >, b)
#define CHECK_GE(a, b) MT_CMP(a, >=, b)

/* CHECK_SYS(expr): expr must not return -1; evaluates to its value. */
#define CHECK_SYS(expr)                                                   \
	({                                                                \
		errno = 0;                                                \
		long __r = (long)(expr);                                  \
		int __e = errno;                                          \
		if (__r == -1) {                                          \
			mt_fail(__FILE__, __LINE__, "%s = -1 (%s)", #expr, \
				mt_errname(__e));                         \
			return;                                           \
		}                                                         \
		__r;                                                      \
	})

/* CHECK_ERR(expr, E): expr must return -1 with errno E. */
#define CHECK_ERR(expr, E)                                                  \
	do {                                                                \
		errno = 0;                                                  \
		long __r = (long)(expr);                                    \
		int __e = errno;                                            \
		if (__r != -1 || __e != (E)) {                              \
			mt_fail(__FILE__, __LINE__,                         \
				"%s: expected -1 (%s) got %ld (%s)", #expr, \
				mt_errname(E), __r,                         \
				__r == -1 ? mt_errname(__e) : "no error");  \
			return;                                             \
		}                                                           \
	} while (0)

/* CHECK_RET(expr, E): expr returns an error number directly (pthreads). */
#define CHECK_RET(expr, E)                                                 \
	do {                                                               \
		int __r = (int)(expr);                                     \
		if (__r != (E)) {                                          \
			mt_fail(__FILE__, __LINE__,                        \
				"%s: expected %s got %s", #expr,           \
				(E) == 0 ? "0" : mt_errname(E),            \
				__r == 0 ? "0" : mt_errname(__r));         \
			return;                                            \
		}                                                          \
	} while (0)

#define CHECK_RET0(expr) CHECK_RET(expr, 0)

/* CHECK_MAP(expr): mmap-like expr must not return MAP_FAILED. */
#define CHECK_MAP(expr)                                                   \
	({                                                                \
		errno = 0;                                                \
		void *__p = (expr);                                       \
		int __e = errno;                                          \
		if (__p == (void *)-1) {                                  \
			mt_fail(__FILE__, __LINE__, "%s = MAP_FAILED (%s)", \
				#expr, mt_errname(__e));                  \
			return;                                           \
		}                                                         \
		__p;                                                      \
	})

#define CHECK_STREQ(a, b)                                                    \
	do {                                                                 \
		const char *__a = (a), *__b = (b);                           \
		if (__a == NULL || __b == NULL || strcmp(__a, __b) != 0) {   \
			mt_fail(__FILE__, __LINE__,                          \
				"expected %s == %s: got \"%s\" vs \"%s\"",   \
				#a, #b, __a ? __a : "(null)",                \
				__b ? __b : "(null)");                       \
			return;                                              \
		}                                                            \
	} while (0)

#define CHECK_MEMEQ(a, b, n)                                                 \
	do {                                                                 \
		if (memcmp((a), (b), (n)) != 0) {                            \
			mt_fail(__FILE__, __LINE__,                          \
				"expected %zu bytes of %s == %s",            \
				(size_t)(n), #a, #b);                        \
			return;                                              \
		}                                                            \
	} while (0)

/* CHECK_EXITED(status, code): a wait status of a normal exit with code. */
#define CHECK_EXITED(status, code)                                           \
	do {                                                                 \
		int __s = (status);                                          \
		if (!WIFEXITED(__s) || WEXITSTATUS(__s) != (code)) {         \
			mt_fail(__FILE__, __LINE__,                          \
				"expected child to exit %d: %s", (code),     \
				mt_status_str(__s));                         \
			return;                                              \
		}                                                            \
	} while (0)

/* CHECK_SIGNALED(status, sig): a wait status of death by signal sig. */
#define CHECK_SIGNALED(status, sig)                                          \
	do {                                                                 \
		int __s = (status);                                          \
		if (!WIFSIGNALED(__s) || WTERMSIG(__s) != (sig)) {           \
			mt_fail(__FILE__, __LINE__,                          \
				"expected child killed by %s: %s",           \
				mt_signame(sig), mt_status_str(__s));        \
			return;                                              \
		}                                                            \
	} while (0)

/* CHILD_CHECK(cond): in a forked child; exits MT_CHILD_FAIL if false. */
#define CHILD_CHECK(cond)                                                  \
	do {                                                               \
		if (!(cond))                                               \
			mt_child_fail(__FILE__, __LINE__, #cond, errno);   \
	} while (0)

/* mt_wait waits for pid (any state change given by flags) and returns the
 * status, or -1 with errno set. Retries on EINTR. */
int mt_wait(pid_t pid);

/* mt_data returns the path of a file shipped in test/syscalls/data (from
 * $MOAT_TEST_DATA). The result lives until the 8th next call. */
const char *mt_data(const char *name);

/* mt_wait_blocked waits (up to timeout_ms) until thread tid of this
 * process, or child process tid, is asleep in the kernel (state S or D in
 * /proc/self/task/TID/stat, or /proc/TID/stat) and returns 0, or -1 on
 * timeout. Use it before waking or signalling a thread or child that must
 * already be blocked. Without procfs it sleeps 50 ms and returns 0. */
int mt_wait_blocked(pid_t tid, int timeout_ms);

/* mt_now_ns returns CLOCK_MONOTONIC in nanoseconds. */
int64_t mt_now_ns(void);

/* mt_read_n reads from fd until n bytes have arrived, EOF, an error, or
 * timeout_ms passes with nothing to read, and returns the byte count (or
 * -1 with errno set if the first read fails). Use it where Linux delivers
 * data in pieces, such as pty echo, which the kernel pushes from a work
 * queue. */
ssize_t mt_read_n(int fd, void *buf, size_t n, int timeout_ms);

/* mt_enter_scratch makes /dev/shm/moat-NAME-PID (the writable tmpfs of
 * both runs) and enters it; on failure it fails the case and returns -1. */
int mt_enter_scratch(const char *name);

/* ENTER() puts the case in a fresh scratch directory named after it. */
#define ENTER()                                   \
	do {                                      \
		if (mt_enter_scratch(__func__) < 0) \
			return;                   \
	} while (0)

/* AS_USER(body) runs body in a child with uid and gid 1000, no
 * supplementary groups and so no capabilities, and checks that it exits 0
 * (the program must include <grp.h> and <sys/wait.h>). */
#define AS_USER(...)                                                         \
	do {                                                                 \
		pid_t __p = fork();                                          \
		CHECK(__p >= 0);                                             \
		if (__p == 0) {                                              \
			if (setgroups(0, NULL) < 0 || setresgid(1000, 1000, 1000) < 0 || \
			    setresuid(1000, 1000, 1000) < 0)                 \
				_exit(98);                                   \
			__VA_ARGS__;                                         \
			_exit(0);                                            \
		}                                                            \
		int __st;                                                    \
		CHECK_SYS(waitpid(__p, &__st, 0));                           \
		if (!WIFEXITED(__st) || WEXITSTATUS(__st) != 0)              \
			FAIL("user child: %s", mt_status_str(__st));         \
	} while (0)

/* CHILD_ERR(expr, E): in a forked child, expr must fail with errno E. */
#define CHILD_ERR(expr, E)                                                   \
	do {                                                                 \
		errno = 0;                                                   \
		long __r = (long)(expr);                                     \
		if (__r != -1 || errno != (E))                               \
			mt_child_fail(__FILE__, __LINE__, #expr " expected " #E, \
				      __r == -1 ? errno : 0);                \
	} while (0)

#endif
