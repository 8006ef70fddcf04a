package main

import (
	"archive/tar"
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The file benchmarks' data lives in the cache directory, which is under
// the host root that `runsc do --rootfs /` serves, so both runs read the
// same files.

const bigFileSize = 1 << 30

// bigFile returns a 1 GiB file of pseudo-random bytes, made once.
func bigFile() (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "seq-1g.dat")
	if st, err := os.Stat(p); err == nil && st.Size() == bigFileSize {
		return p, nil
	}
	f, err := os.Create(p + ".tmp")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	var word [8]byte
	for i := 0; i < bigFileSize/8; i++ {
		v := r.Uint64()
		for j := range word {
			word[j] = byte(v >> (8 * j))
		}
		w.Write(word[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(p+".tmp", p)
}

func bigFileSetup(*env) (runArgs, error) {
	p, err := bigFile()
	return runArgs{nativeArg: p, sandboxArg: p}, err
}

// dentsSetup names a fresh directory in /dev/shm for each side; the
// native one is removed afterwards (the sandbox's /dev/shm goes with it).
func dentsSetup(*env) (runArgs, error) {
	p := fmt.Sprintf("/dev/shm/moat-bench-dents-%d", os.Getpid())
	return runArgs{nativeArg: p, sandboxArg: p, cleanup: func() { os.RemoveAll(p) }}, nil
}

func writeSetup(*env) (runArgs, error) {
	p := fmt.Sprintf("/dev/shm/moat-bench-write-%d", os.Getpid())
	return runArgs{nativeArg: p, sandboxArg: p, cleanup: func() { os.Remove(p) }}, nil
}

// untarSetup makes (once) a tarball of 10,000 small files in 100
// directories. Native runs extract into /dev/shm; sandboxed ones into
// /var/tmp, which is the root's overlay.
func untarSetup(*env) (runArgs, error) {
	dir, err := cacheDir()
	if err != nil {
		return runArgs{}, err
	}
	p := filepath.Join(dir, "untar-10k.tar")
	if _, err := os.Stat(p); err != nil {
		if err := writeTarball(p); err != nil {
			return runArgs{}, err
		}
	}
	cleanup := func() {
		matches, _ := filepath.Glob("/dev/shm/moat-untar-*")
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
	return runArgs{nativeArg: p, sandboxArg: p, sandboxEnv: []string{"MOAT_BENCH_DIR=/var/tmp"}, cleanup: cleanup}, nil
}

func writeTarball(p string) error {
	f, err := os.Create(p + ".tmp")
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	mtime := time.Unix(1_000_000_000, 0)
	for d := 0; d < 100; d++ {
		name := fmt.Sprintf("d%03d/", d)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: mtime}); err != nil {
			return err
		}
		for i := 0; i < 100; i++ {
			body := []byte(strings.Repeat(strconv.Itoa(d*100+i), 20))
			h := &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("%sf%03d", name, i), Mode: 0o644, Size: int64(len(body)), ModTime: mtime}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := tw.Write(body); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// memory measures the resident memory of an idle `sleep`: natively its
// own RSS; sandboxed, the sum over the sandbox and gofer processes (the
// stub processes hold only the stub page and application memory, which
// the memory file accounts in the sandbox's RSS once it is touched by the
// Sentry). It also prints, on stderr, what each counted process's RSS is
// made of (/proc/PID/status RssAnon, RssFile: pages of the runsc binary,
// RssShmem: the memory file) and its PSS.
func memory(e *env) (float64, float64, error) {
	native, _, err := idleRSS([]string{"/bin/sleep", "5"}, func(pid int, argv0 string) bool { return true })
	if err != nil {
		return 0, 0, fmt.Errorf("native: %w", err)
	}
	if e.nativeOnly {
		return native, 0, nil
	}
	sandbox, parts, err := idleRSS(sandboxArgv(e.runsc, []string{"/bin/sleep", "5"}), func(pid int, argv0 string) bool {
		return strings.HasSuffix(argv0, "-sandbox") || strings.HasSuffix(argv0, "-gofer")
	})
	if err != nil {
		return native, 0, fmt.Errorf("sandboxed: %w", err)
	}
	fmt.Fprintf(os.Stderr, "memory: %s\n", strings.Join(parts, "; "))
	return native, sandbox, nil
}

// idleRSS starts argv, waits for it to settle, and sums VmRSS (MiB) of the
// started process and its descendants that count says to include. parts
// describes each counted process's RSS (kB) by kind, and its PSS.
func idleRSS(argv []string, count func(pid int, argv0 string) bool) (mib float64, parts []string, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	time.Sleep(2 * time.Second)
	pids := descendants(cmd.Process.Pid)
	var kib float64
	n := 0
	for _, pid := range pids {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if !count(pid, argv0) {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		fields := statusKB(string(status))
		rss, ok := fields["VmRSS"]
		if !ok {
			continue
		}
		kib += rss
		n++
		part := fmt.Sprintf("%s %.0f kB (anon %.0f, file %.0f, shmem %.0f)", filepath.Base(argv0), rss, fields["RssAnon"], fields["RssFile"], fields["RssShmem"])
		if rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
			if pss, ok := statusKB(string(rollup))["Pss"]; ok {
				part += fmt.Sprintf(" pss %.0f kB", pss)
			}
		}
		parts = append(parts, part)
	}
	if n == 0 {
		return 0, nil, fmt.Errorf("no process of %s to measure", argv[0])
	}
	return kib / 1024, parts, nil
}

// statusKB reads the "Name:   N kB" lines of a /proc status-like file.
func statusKB(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
