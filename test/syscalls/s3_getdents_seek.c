//go:build ignore

/* s3_getdents_seek: reading directories in pieces: getdents64 and the
 * legacy getdents with buffers that hold one record, resuming at a
 * record's d_off with lseek, SEEK_CUR positions, rewinding, d_type of each
 * node type, "." and ".." inode numbers, both calls listing the same names,
 * entries removed between reads, and the errors (EINVAL, ENOTDIR, EBADF,
 * EFAULT). Works in /dev/shm. */
#include "moattest.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct d64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

struct dold {
	unsigned long ino;
	unsigned long off;
	unsigned short reclen;
	char name[];
};

static int make(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
	if (fd < 0)
		return -1;
	return close(fd);
}

/* make_n creates files f0..f(n-1) in the current directory. */
static int make_n(int n)
{
	char name[16];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "f%d", i);
		if (make(name) < 0)
			return -1;
	}
	return 0;
}

/* names64 reads all of dfd with getdents64 buffers of bufsz bytes and
 * returns the number of names (not counting . and ..), or -1. */
static int names64(int fd, size_t bufsz, int *dots)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	*dots = 0;
	for (;;) {
		long r = syscall(SYS_getdents64, fd, buf, bufsz);
		if (r < 0)
			return -1;
		if (r == 0)
			return n;
		for (long off = 0; off < r;) {
			struct d64 *d = (struct d64 *)(buf + off);
			if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
				(*dots)++;
			else
				n++;
			off += d->reclen;
		}
	}
}

static void one_record_buffers(void)
{
	ENTER();
	CHECK_SYS(make_n(20));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	/* A record of a 2-byte name takes 19 + 3 bytes, rounded to 24. */
	int dots;
	CHECK_EQ(names64(fd, 24, &dots), 20);
	CHECK_EQ(dots, 2);
	/* Smaller than a record: EINVAL, and the position stays. */
	CHECK_SYS(lseek(fd, 0, SEEK_SET));
	char buf[64] __attribute__((aligned(8)));
	CHECK_ERR(syscall(SYS_getdents64, fd, buf, 10), EINVAL);
	CHECK_EQ(names64(fd, sizeof buf, &dots), 20);
	CHECK_EQ(dots, 2);
}

static void legacy_one_record_buffers(void)
{
	ENTER();
	CHECK_SYS(make_n(10));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	for (;;) {
		/* The legacy record: 8+8+2 bytes, the name, NUL, the type
		 * byte, rounded to 8: 32 bytes fit any 2-char name. */
		long r = CHECK_SYS(syscall(SYS_getdents, fd, buf, 32));
		if (r == 0)
			break;
		struct dold *d = (struct dold *)buf;
		CHECK_EQ(d->reclen, r);
		/* The type is the record's last byte. */
		unsigned char type = buf[d->reclen - 1];
		if (d->name[0] == 'f')
			CHECK_EQ(type, DT_REG);
		else
			CHECK_EQ(type, DT_DIR);
		n++;
	}
	CHECK_EQ(n, 12);
	CHECK_SYS(lseek(fd, 0, SEEK_SET));
	CHECK_ERR(syscall(SYS_getdents, fd, buf, 8), EINVAL);
}

static void resume_at_d_off(void)
{
	ENTER();
	CHECK_SYS(make_n(8));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char buf[4096] __attribute__((aligned(8)));
	long r = CHECK_SYS(syscall(SYS_getdents64, fd, buf, sizeof buf));
	/* Remember the 4th record's d_off and the name after it. */
	long off = 0;
	struct d64 *d = NULL;
	for (int i = 0; i < 4; i++) {
		d = (struct d64 *)(buf + off);
		off += d->reclen;
	}
	CHECK_LT(off, r);
	int64_t resume = d->off;
	char next[64];
	snprintf(next, sizeof next, "%s", ((struct d64 *)(buf + off))->name);
	/* Seeking to a d_off continues with the following entry. */
	CHECK_EQ(lseek(fd, resume, SEEK_SET), resume);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), resume);
	char b2[256] __attribute__((aligned(8)));
	CHECK_GT(CHECK_SYS(syscall(SYS_getdents64, fd, b2, sizeof b2)), 0);
	CHECK_STREQ(((struct d64 *)b2)->name, next);
	/* Rewinding starts over at ".". */
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_GT(CHECK_SYS(syscall(SYS_getdents64, fd, b2, sizeof b2)), 0);
	CHECK_STREQ(((struct d64 *)b2)->name, ".");
}

static void position_after_end(void)
{
	ENTER();
	CHECK_SYS(make_n(3));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	int dots;
	CHECK_EQ(names64(fd, 4096, &dots), 3);
	/* At the end, further reads return 0. */
	char buf[256] __attribute__((aligned(8)));
	CHECK_EQ(syscall(SYS_getdents64, fd, buf, sizeof buf), 0);
	CHECK_EQ(syscall(SYS_getdents, fd, buf, sizeof buf), 0);
	/* Negative positions are EINVAL. */
	CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
}

static void dtypes_of_nodes(void)
{
	ENTER();
	CHECK_SYS(make("reg"));
	CHECK_SYS(mkdir("dir", 0755));
	CHECK_SYS(symlink("reg", "lnk"));
	CHECK_SYS(mkfifo("fifo", 0644));
	int sk = CHECK_SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "sock"};
	CHECK_SYS(bind(sk, (struct sockaddr *)&sa, sizeof sa));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char buf[4096] __attribute__((aligned(8)));
	long r = CHECK_SYS(syscall(SYS_getdents64, fd, buf, sizeof buf));
	int seen = 0;
	for (long off = 0; off < r;) {
		struct d64 *d = (struct d64 *)(buf + off);
		struct stat st;
		CHECK_SYS(fstatat(fd, d->name, &st, AT_SYMLINK_NOFOLLOW));
		/* d_ino matches the inode number fstatat reports. */
		CHECK_EQ(d->ino, st.st_ino);
		int want = -1;
		if (strcmp(d->name, "reg") == 0)
			want = DT_REG;
		else if (strcmp(d->name, "dir") == 0)
			want = DT_DIR;
		else if (strcmp(d->name, "lnk") == 0)
			want = DT_LNK;
		else if (strcmp(d->name, "fifo") == 0)
			want = DT_FIFO;
		else if (strcmp(d->name, "sock") == 0)
			want = DT_SOCK;
		if (want >= 0) {
			CHECK_EQ(d->type, want);
			seen++;
		}
		off += d->reclen;
	}
	CHECK_EQ(seen, 5);
}

static void dot_dotdot_inodes(void)
{
	ENTER();
	CHECK_SYS(mkdir("sub", 0755));
	struct stat self, parent;
	CHECK_SYS(stat("sub", &self));
	CHECK_SYS(stat(".", &parent));
	int fd = CHECK_SYS(open("sub", O_RDONLY | O_DIRECTORY));
	char buf[512] __attribute__((aligned(8)));
	long r = CHECK_SYS(syscall(SYS_getdents64, fd, buf, sizeof buf));
	int seen = 0;
	for (long off = 0; off < r;) {
		struct d64 *d = (struct d64 *)(buf + off);
		if (strcmp(d->name, ".") == 0) {
			CHECK_EQ(d->ino, self.st_ino);
			CHECK_EQ(d->type, DT_DIR);
			seen++;
		} else if (strcmp(d->name, "..") == 0) {
			CHECK_EQ(d->ino, parent.st_ino);
			CHECK_EQ(d->type, DT_DIR);
			seen++;
		} else {
			FAIL("unexpected entry %s", d->name);
		}
		off += d->reclen;
	}
	CHECK_EQ(seen, 2);
}

static void legacy_and_64_agree(void)
{
	ENTER();
	CHECK_SYS(make_n(6));
	CHECK_SYS(mkdir("dd", 0755));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char b64[4096] __attribute__((aligned(8)));
	char bold[4096] __attribute__((aligned(8)));
	long r64 = CHECK_SYS(syscall(SYS_getdents64, fd, b64, sizeof b64));
	CHECK_SYS(lseek(fd, 0, SEEK_SET));
	long rold = CHECK_SYS(syscall(SYS_getdents, fd, bold, sizeof bold));
	long o64 = 0, oold = 0;
	int n = 0;
	while (o64 < r64 && oold < rold) {
		struct d64 *a = (struct d64 *)(b64 + o64);
		struct dold *b = (struct dold *)(bold + oold);
		CHECK_STREQ(a->name, b->name);
		CHECK_EQ(a->ino, b->ino);
		CHECK_EQ((uint64_t)a->off, b->off);
		CHECK_EQ(a->type, (unsigned char)bold[oold + b->reclen - 1]);
		o64 += a->reclen;
		oold += b->reclen;
		n++;
	}
	CHECK_EQ(o64, r64);
	CHECK_EQ(oold, rold);
	CHECK_EQ(n, 9);
}

static void removed_entries_not_listed(void)
{
	ENTER();
	CHECK_SYS(make_n(10));
	int fd = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	char buf[64] __attribute__((aligned(8)));
	/* Read ".", then remove every file before reading on: none of them
	 * may appear. */
	CHECK_GT(CHECK_SYS(syscall(SYS_getdents64, fd, buf, 24)), 0);
	char name[16];
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "f%d", i);
		CHECK_SYS(unlink(name));
	}
	int dots;
	CHECK_EQ(names64(fd, sizeof buf, &dots), 0);
	CHECK_LE(dots, 1);
}

static void getdents_errors(void)
{
	ENTER();
	CHECK_SYS(make("f"));
	int f = CHECK_SYS(open("f", O_RDONLY));
	char buf[256] __attribute__((aligned(8)));
	CHECK_ERR(syscall(SYS_getdents64, f, buf, sizeof buf), ENOTDIR);
	CHECK_ERR(syscall(SYS_getdents, f, buf, sizeof buf), ENOTDIR);
	CHECK_ERR(syscall(SYS_getdents64, 99, buf, sizeof buf), EBADF);
	CHECK_ERR(syscall(SYS_getdents, 99, buf, sizeof buf), EBADF);
	int d = CHECK_SYS(open(".", O_RDONLY | O_DIRECTORY));
	CHECK_ERR(syscall(SYS_getdents64, d, (void *)1, sizeof buf), EFAULT);
	CHECK_ERR(syscall(SYS_getdents, d, (void *)1, sizeof buf), EFAULT);
	/* An O_PATH descriptor cannot be read: EBADF. */
	int p = CHECK_SYS(open(".", O_PATH));
	CHECK_ERR(syscall(SYS_getdents64, p, buf, sizeof buf), EBADF);
	/* A pipe is not a directory. */
	int pp[2];
	CHECK_SYS(pipe(pp));
	CHECK_ERR(syscall(SYS_getdents64, pp[0], buf, sizeof buf), ENOTDIR);
}

static const struct mt_case cases[] = {
	MT_CASE(one_record_buffers),
	MT_CASE(legacy_one_record_buffers),
	MT_CASE(resume_at_d_off),
	MT_CASE(position_after_end),
	MT_CASE(dtypes_of_nodes),
	MT_CASE(dot_dotdot_inodes),
	MT_CASE(legacy_and_64_agree),
	MT_CASE(removed_entries_not_listed),
	MT_CASE(getdents_errors),
};

MT_MAIN(cases)
