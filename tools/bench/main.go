// Command bench measures Moat against native Linux on this machine, in
// the same run, and prints the ratio of each pair.
//
//	go run ./tools/bench                        # everything
//	go run ./tools/bench --json out.json        # also write JSON
//	go run ./tools/bench --only getpid,startup  # some benchmarks
//	go run ./tools/bench --native-only          # no runsc needed
//	go run ./tools/bench --platform=ptrace,systrap --only getpid,startup
//	                                            # one sandbox column per platform
//
// Micro-benchmarks are modes of one static C program (csrc/micro.c) that
// prints nanoseconds per operation; each runs natively and under
// `runsc do --rootfs / --`. The startup benchmark times whole commands
// (`runsc do /bin/true` against `/bin/true`) and reports medians.
//
// To add a micro-benchmark, add a mode to csrc/micro.c and a line to
// benchmarks below; for other kinds, add a benchmark with its own run func.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one benchmark's outcome; Sandbox and Ratio are zero when the
// sandboxed run did not happen or failed (Error says why).
type result struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	Native  float64 `json:"native"`
	Sandbox float64 `json:"sandbox,omitempty"`
	Ratio   float64 `json:"ratio,omitempty"`
	// Platform is runsc's --platform for the sandboxed run ("" for
	// runsc's default).
	Platform string `json:"platform,omitempty"`
	Detail   string `json:"detail"`
	Error    string `json:"error,omitempty"`
}

// runscGlobalFlags are global flags put before `do` in every sandboxed
// command (--platform); run sets them for each platform in turn.
var runscGlobalFlags []string

// env is what benchmarks run with.
type env struct {
	micro      string // path of the built micro program
	runsc      string // path of runsc ("" with --native-only)
	reps       int
	nativeOnly bool
}

// benchmark measures one thing natively and sandboxed.
type benchmark struct {
	name   string
	unit   string
	detail string
	// run returns the native and sandboxed figures.
	run func(e *env) (native, sandbox float64, err error)
	// mode is the csrc/micro.c mode of a micro-benchmark ("" for others).
	mode string
	// hasSetup says the benchmark prepares data (paths, files) first.
	hasSetup bool
}

// micro makes a benchmark from a mode of csrc/micro.c.
func micro(mode string, iters int, detail string) benchmark {
	return microWith(mode, iters, detail, nil)
}

// runArgs are what one run of a micro mode needs beyond its name and
// iterations: the path argument and environment of each side.
type runArgs struct {
	nativeArg, sandboxArg string
	sandboxEnv            []string
	cleanup               func()
}

// microWith makes a benchmark from a mode of csrc/micro.c whose arguments
// setup prepares (nil: none).
func microWith(mode string, iters int, detail string, setup func(e *env) (runArgs, error)) benchmark {
	return benchmark{
		name:     mode,
		unit:     "ns/op",
		detail:   fmt.Sprintf("%s, %d iterations", detail, iters),
		mode:     mode,
		hasSetup: setup != nil,
		run: func(e *env) (float64, float64, error) {
			var ra runArgs
			if setup != nil {
				var err error
				if ra, err = setup(e); err != nil {
					return 0, 0, fmt.Errorf("setup: %w", err)
				}
				if ra.cleanup != nil {
					defer ra.cleanup()
				}
			}
			args := []string{mode, strconv.Itoa(iters)}
			withArg := func(a string) []string {
				if a == "" {
					return args
				}
				return append(slices.Clone(args), a)
			}
			native, err := runMicro(append([]string{e.micro}, withArg(ra.nativeArg)...))
			if err != nil {
				return 0, 0, fmt.Errorf("native: %w", err)
			}
			if e.nativeOnly {
				return native, 0, nil
			}
			argv := append([]string{e.micro}, withArg(ra.sandboxArg)...)
			sandbox, err := runMicro(sandboxArgvEnv(e.runsc, ra.sandboxEnv, argv))
			if err != nil {
				return native, 0, fmt.Errorf("sandboxed: %w", err)
			}
			return native, sandbox, nil
		},
	}
}

var benchmarks = []benchmark{
	micro("getpid", 100000, "raw getpid syscall loop"),
	{
		name:   "ptrace_floor",
		unit:   "ns/op",
		detail: "native: a C tracer serving getpid with PTRACE_SYSEMU+GETREGS+SETREGS, its tracee bound to its CPU (the floor of any ptrace sandbox here); sandbox: Moat's getpid",
		run:    ptraceFloor,
	},
	micro("gettid", 100000, "raw gettid syscall loop"),
	micro("clock_gettime", 1000000, "CLOCK_MONOTONIC through the vDSO"),
	micro("readzero", 100000, "read of 1 byte from /dev/zero"),
	micro("stat", 20000, "stat(/etc/passwd)"),
	micro("openclose", 20000, "open+close of /etc/passwd"),
	micro("pipe", 10000, "1-byte pipe round trip between two processes"),
	micro("pipethru", 4000, "64 KiB streamed through a pipe to another process"),
	micro("futex", 10000, "futex wake/wait round trip between two threads"),
	micro("thread", 2000, "pthread_create + pthread_join"),
	micro("fork", 300, "fork + _exit + waitpid"),
	micro("forkexec", 100, "fork + execve(/bin/true) + waitpid"),
	micro("mmapfault", 65536, "first touch of a page of fresh anonymous memory"),
	microWith("getdents", 20, "opendir+readdir+closedir of a 10,000-file directory in /dev/shm (tmpfs)", dentsSetup),
	microWith("seqread", 3, "one pass over a 1 GiB file of the root in 1 MiB reads (sandboxed: through the gofer's fd)", bigFileSetup),
	microWith("randread", 20000, "4 KiB pread at random offsets of that 1 GiB file", bigFileSetup),
	microWith("seqwrite", 2, "1 GiB written in 1 MiB writes to a new file in /dev/shm (tmpfs)", writeSetup),
	microWith("untar", 3, "tar -x of 10,000 small files: natively into /dev/shm (tmpfs), sandboxed into the root's overlay", untarSetup),
	{
		name:   "startup",
		unit:   "ms",
		detail: "wall time of /bin/true vs runsc do --rootfs / -- /bin/true, median",
		run:    startup,
	},
	runcStartup,
	{
		name:   "memory",
		unit:   "MiB",
		detail: "RSS of an idle sleep: natively, vs the sandbox and gofer processes running it",
		run:    memory,
	},
}

// ptraceFloor compares Moat's getpid with the cheapest possible ptrace
// round trip measured on this machine in the same run.
func ptraceFloor(e *env) (float64, float64, error) {
	floor, err := runMicro([]string{e.micro, "sysemu", "100000"})
	if err != nil {
		return 0, 0, fmt.Errorf("native: %w", err)
	}
	if e.nativeOnly {
		return floor, 0, nil
	}
	moat, err := runMicro(sandboxArgv(e.runsc, []string{e.micro, "getpid", "100000"}))
	if err != nil {
		return floor, 0, fmt.Errorf("sandboxed: %w", err)
	}
	return floor, moat, nil
}

func sandboxArgv(runsc string, argv []string) []string {
	return sandboxArgvEnv(runsc, nil, argv)
}

// sandboxArgvEnv is sandboxArgv with --env for each of env.
func sandboxArgvEnv(runsc string, env, argv []string) []string {
	out := append([]string{runsc}, runscGlobalFlags...)
	out = append(out, "do", "--rootfs", "/")
	for _, kv := range env {
		out = append(out, "--env", kv)
	}
	return append(append(out, "--"), argv...)
}

// runMicro runs a micro program and parses the ns/op it prints.
func runMicro(argv []string) (float64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: bad output %q", strings.Join(argv, " "), out)
	}
	return v, nil
}

// startup times whole commands and returns medians in milliseconds.
func startup(e *env) (float64, float64, error) {
	native, err := medianWall(e.reps, []string{"/bin/true"})
	if err != nil {
		return 0, 0, fmt.Errorf("native: %w", err)
	}
	if e.nativeOnly {
		return native, 0, nil
	}
	sandbox, err := medianWall(e.reps, sandboxArgv(e.runsc, []string{"/bin/true"}))
	if err != nil {
		return native, 0, fmt.Errorf("sandboxed: %w", err)
	}
	return native, sandbox, nil
}

func medianWall(reps int, argv []string) (float64, error) {
	var times []float64
	for i := 0; i < reps; i++ {
		start := time.Now()
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository (no go.mod found)")
		}
		dir = parent
	}
}

func cacheDir() (string, error) {
	if d := os.Getenv("MOAT_CACHE"); d != "" {
		return filepath.Join(d, "bench"), os.MkdirAll(filepath.Join(d, "bench"), 0o755)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	d := filepath.Join(base, "moat", "bench")
	return d, os.MkdirAll(d, 0o755)
}

// buildMicro compiles csrc/micro.c (static, -O2) into the cache, keyed by
// the source's hash.
func buildMicro(root string) (string, error) {
	src := filepath.Join(root, "tools", "bench", "csrc", "micro.c")
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "micro-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp := out + ".tmp"
	if msg, err := exec.Command("gcc", "-static", "-O2", "-pthread", "-o", tmp, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc: %v\n%s", err, msg)
	}
	return out, os.Rename(tmp, out)
}

func buildRunsc(root string) (string, error) {
	if p := os.Getenv("MOAT_RUNSC"); p != "" {
		return filepath.Abs(p)
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "runsc")
	cmd := exec.Command("go", "build", "-o", out, "./runsc")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./runsc: %v\n%s", err, msg)
	}
	return out, nil
}

func main() {
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	runscFlag := flag.String("runsc", "", "runsc binary to use (default: $MOAT_RUNSC, else built from ./runsc)")
	only := flag.String("only", "", "comma-separated benchmark names to run")
	reps := flag.Int("reps", 20, "repetitions of whole-command benchmarks")
	nativeOnly := flag.Bool("native-only", false, "measure native runs only")
	platforms := flag.String("platform", "", "comma-separated runsc --platform values to measure, each in its own sandbox column (default: runsc's default platform)")
	flag.Parse()

	if err := run(*jsonOut, *runscFlag, *only, *platforms, *reps, *nativeOnly); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(jsonOut, runscPath, only, platformList string, reps int, nativeOnly bool) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	e := &env{reps: reps, nativeOnly: nativeOnly}
	if e.micro, err = buildMicro(root); err != nil {
		return err
	}
	if !nativeOnly {
		if runscPath != "" {
			e.runsc, err = filepath.Abs(runscPath)
		} else {
			e.runsc, err = buildRunsc(root)
		}
		if err != nil {
			return fmt.Errorf("runsc unavailable (use --native-only to measure native runs alone): %w", err)
		}
	}
	var selected []benchmark
	for _, b := range benchmarks {
		if only == "" || slices.Contains(strings.Split(only, ","), b.name) {
			selected = append(selected, b)
		}
	}
	if len(selected) == 0 {
		return fmt.Errorf("no benchmark matches --only=%s", only)
	}

	platforms := []string{""}
	if platformList != "" && !nativeOnly {
		platforms = strings.Split(platformList, ",")
	}
	var results []result
	failed := 0
	for _, b := range selected {
		for _, plat := range platforms {
			runscGlobalFlags = nil
			if plat != "" {
				runscGlobalFlags = []string{"--platform=" + plat}
			}
			r := result{Name: b.name, Unit: b.unit, Detail: b.detail, Platform: plat}
			native, sandbox, err := b.run(e)
			r.Native, r.Sandbox = native, sandbox
			if native > 0 && sandbox > 0 {
				r.Ratio = sandbox / native
			}
			if err != nil {
				r.Error = err.Error()
				failed++
			}
			results = append(results, r)
		}
	}
	runscGlobalFlags = nil
	if len(platforms) > 1 {
		printPlatformTable(results, platforms)
	} else {
		printTable(results)
	}
	if jsonOut != "" {
		doc := map[string]any{
			"time":    time.Now().UTC().Format(time.RFC3339),
			"go":      runtime.Version(),
			"cpus":    runtime.NumCPU(),
			"results": results,
		}
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d benchmark(s) failed", failed)
	}
	return nil
}

func printTable(results []result) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "benchmark\tunit\tnative\tsandbox\tratio\t")
	for _, r := range results {
		sandbox, ratio := "-", "-"
		if r.Sandbox > 0 {
			sandbox = fmt.Sprintf("%.1f", r.Sandbox)
		}
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.1fx", r.Ratio)
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%s\t%s\t\n", r.Name, r.Unit, r.Native, sandbox, ratio)
	}
	w.Flush()
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "%s: %s\n", r.Name, r.Error)
		}
	}
}

// printPlatformTable prints one row per benchmark with a sandbox and a
// ratio column per platform. Each ratio is against the native figure
// measured in the same pass as its sandbox figure (the load of a shared
// machine moves between passes); the native column shows the first pass's.
func printPlatformTable(results []result, platforms []string) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "benchmark\tunit\tnative\t")
	for _, p := range platforms {
		fmt.Fprintf(w, "%s\tratio\t", p)
	}
	fmt.Fprintln(w)
	for i := 0; i < len(results); i += len(platforms) {
		row := results[i : i+len(platforms)]
		fmt.Fprintf(w, "%s\t%s\t%.1f\t", row[0].Name, row[0].Unit, row[0].Native)
		for _, r := range row {
			sandbox, ratio := "-", "-"
			if r.Sandbox > 0 {
				sandbox = fmt.Sprintf("%.1f", r.Sandbox)
			}
			if r.Ratio > 0 {
				ratio = fmt.Sprintf("%.1fx", r.Ratio)
			}
			fmt.Fprintf(w, "%s\t%s\t", sandbox, ratio)
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "%s (%s): %s\n", r.Name, r.Platform, r.Error)
		}
	}
}
