package e2e

import (
	"strings"
	"testing"
)

// The real programs of issue #3 (busybox's shell with util-linux's
// flock, as Debian's busybox has no flock applet), each working in /dev/shm (a fresh tmpfs
// in both runs) and compared with its native run.

const gccScript = `set -e
cd /dev/shm
cat > h.c <<'X'
#include <stdio.h>
int main(int c, char **v) { printf("hello %d %s\n", 6 * 7, c > 1 ? v[1] : "-"); return 3; }
X
gcc -O1 -static h.c -o h
set +e
./h sandbox
echo "exit $?"
gcc -fsyntax-only -x c - <<'X' 2>&1 | grep -c error
int main(void) { return undefined_thing; }
X
`

const sqliteScript = `set -e
cd /dev/shm
sqlite3 t.db <<'X'
CREATE TABLE t(x INTEGER PRIMARY KEY, y INTEGER, s TEXT);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000)
INSERT INTO t SELECT x, x * x, printf('row-%05d', x) FROM c;
COMMIT;
CREATE INDEX ty ON t(y);
SELECT count(*), sum(y), min(s), max(s) FROM t;
SELECT x FROM t WHERE y = 49999 * 0 + 2500 OR s = 'row-09999';
UPDATE t SET s = 'changed' WHERE x % 1000 = 0;
DELETE FROM t WHERE x > 9990;
SELECT count(*), count(DISTINCT s) FROM t;
PRAGMA integrity_check;
X
ls -l t.db | awk '{print $5 > 0}'
`

const tarScript = `set -e
cd /dev/shm
mkdir -p src/a/b src/empty
echo one > src/a/one
printf 'two\ntwo\n' > src/a/b/two
ln src/a/one src/a/hard
ln -s ../a/b/two src/a/sym
ln -s /nowhere src/dangling
chmod 0750 src/a/b
chmod 0604 src/a/b/two
chmod 4755 src/a/one
dd if=/dev/zero of=src/sparse bs=1 count=1 seek=1048575 2>/dev/null
find src -exec touch -h -d @1000000000 {} +
tar -cf t.tar src
# Which of the two hard links tar stores as the file depends on the
# directory's listing order, which programs must not rely on.
tar -tvf t.tar --numeric-owner | awk '{print $1, $3, $6, $7, $8}' |
	sed -e 's#src/a/one#src/a/ONE_OR_HARD#; s#src/a/hard#src/a/ONE_OR_HARD#' | sort
mkdir out
tar -xpf t.tar -C out
cd out
find src -printf '%p %M %n %s %l %T@\n' | sort
cat src/a/sym src/a/hard
`

const busyboxFilesScript = `set -e
b=/bin/busybox
cd /dev/shm
$b mkfifo f
(echo through-fifo > f) &
$b cat f
wait
$b touch -d @1000000000 old
echo x > new
$b find . -newer old -type f | $b sort
: > lock
(flock -x 9; echo locked; $b sleep 0.3; echo unlocking) 9>lock &
$b sleep 0.1
flock -n lock true && echo "second lock taken" || echo "second lock refused"
wait
flock lock echo "lock free again"
`

const makeScript = `set -e
cd /dev/shm
printf 'all: b\n\techo done\nb: a\n\tcp a b\n\techo built b\na:\n\techo content > a\nclean:\n\trm -f a b\n.PHONY: all clean\n' > Makefile
make -s
make -s
make -s clean
ls
`

const pythonFilesScript = `
import os
os.chdir("/dev/shm")
with open("a.txt", "w") as f:
    f.write("first\n" * 1000)
os.rename("a.txt", "b.txt")
with open("b.txt", "a") as f:
    f.write("last\n")
with open("b.txt") as f:
    lines = f.read().splitlines()
print(len(lines), lines[0], lines[-1], os.path.exists("a.txt"), os.stat("b.txt").st_size)
os.makedirs("d/e/f")
os.symlink("../b.txt", "d/link")
print(sorted(os.listdir("d")), os.readlink("d/link"), open("d/link").read(6))
fd = os.open("b.txt", os.O_RDONLY)
# Only the low descriptors: the native run inherits a few high ones from
# the test harness.
print(sorted(int(x) for x in os.listdir("/proc/self/fd") if int(x) < 10), os.readlink("/proc/self/fd/%d" % fd))
os.close(fd)
os.remove("b.txt")
print(os.path.exists("d/link"), os.path.lexists("d/link"))
`

func realPrograms() []program {
	nonEmpty := func(t *testing.T, out string) {
		if strings.TrimSpace(out) == "" {
			t.Error("native run printed nothing")
		}
	}
	return []program{
		{
			name: "gcc", needs: "/usr/bin/gcc",
			argv: []string{"/bin/sh", "-c", gccScript},
			env:  append([]string{"TMPDIR=/dev/shm"}, baseEnv...),
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, "hello 42 sandbox\nexit 3\n1\n") {
					t.Errorf("native gcc output unexpected:\n%s", out)
				}
			},
		},
		{
			name: "sqlite3", needs: "/usr/bin/sqlite3",
			argv: []string{"/bin/sh", "-c", sqliteScript},
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(out, "10000|333383335000|row-00001|row-10000\n") || !strings.Contains(out, "ok\n") {
					t.Errorf("native sqlite3 output unexpected:\n%s", out)
				}
			},
		},
		{name: "tar", needs: "/usr/bin/tar", argv: []string{"/bin/sh", "-c", tarScript}, check: nonEmpty},
		{
			name: "busybox_files", needs: "/bin/busybox",
			argv: []string{"/bin/busybox", "sh", "-c", busyboxFilesScript},
			check: func(t *testing.T, out string) {
				want := "through-fifo\n./new\nlocked\nsecond lock refused\nunlocking\nlock free again\n"
				if out != want {
					t.Errorf("native busybox output %q, want %q", out, want)
				}
			},
		},
		{
			name: "python3_files", needs: "/usr/bin/python3",
			argv: []string{"/usr/bin/python3", "-c", pythonFilesScript},
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(out, "1001 first last False 6005\n") {
					t.Errorf("native python3 output unexpected:\n%s", out)
				}
			},
		},
		{name: "make", needs: "/usr/bin/make", argv: []string{"/bin/sh", "-c", makeScript}, check: nonEmpty},
	}
}

// TestRealPrograms runs gcc, sqlite3, tar, make and busybox's file tools
// natively and sandboxed and compares their output.
func TestRealPrograms(t *testing.T) {
	for _, p := range realPrograms() {
		t.Run(p.name, func(t *testing.T) { runProgram(t, p) })
	}
}
