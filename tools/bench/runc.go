package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// runcStartup compares `runsc run` with `runc run` of the same bundle, a
// busybox /bin/true, as issue #6 asks: the "native" figure is runc's.
var runcStartup = benchmark{
	name:   "runc_startup",
	unit:   "ms",
	detail: "wall time of `runc run` (native column) vs `runsc run` of one busybox /bin/true bundle (runc's default config.json), median",
	run:    runcVsRunsc,
}

// runcVsRunsc times runc and runsc running a fresh container of one
// bundle, each with a state root of its own, and returns the medians.
func runcVsRunsc(e *env) (float64, float64, error) {
	runc, err := exec.LookPath("runc")
	if err != nil {
		return 0, 0, fmt.Errorf("runc not found (apt-get install runc): %w", err)
	}
	dir, err := os.MkdirTemp("", "moat-bench-runc-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	bundle := filepath.Join(dir, "bundle")
	if err := busyboxBundle(runc, bundle, "/bin/true"); err != nil {
		return 0, 0, fmt.Errorf("bundle: %w", err)
	}
	native, err := medianRun(e.reps, runc, filepath.Join(dir, "runc-root"), bundle)
	if err != nil {
		return 0, 0, fmt.Errorf("runc: %w", err)
	}
	if e.nativeOnly {
		return native, 0, nil
	}
	sandbox, err := medianRun(e.reps, e.runsc, filepath.Join(dir, "runsc-root"), bundle, runscGlobalFlags...)
	if err != nil {
		return native, 0, fmt.Errorf("runsc: %w", err)
	}
	return native, sandbox, nil
}

// busyboxBundle makes an OCI bundle in dir: runc's default config.json
// (from `runc spec`) running argv without a terminal, and a root holding
// the host's static busybox and a link to it named as argv[0].
func busyboxBundle(runc, dir string, argv ...string) error {
	bin, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return fmt.Errorf("%w (apt-get install busybox-static)", err)
	}
	rootBin := filepath.Join(dir, "rootfs", "bin")
	if err := os.MkdirAll(rootBin, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rootBin, "busybox"), bin, 0o755); err != nil {
		return err
	}
	if name := filepath.Base(argv[0]); name != "busybox" {
		if err := os.Symlink("busybox", filepath.Join(rootBin, name)); err != nil {
			return err
		}
	}
	if out, err := exec.Command(runc, "spec", "--bundle", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("runc spec: %v: %s", err, out)
	}
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("runc spec's config.json: %w", err)
	}
	proc, ok := spec["process"].(map[string]any)
	if !ok {
		return fmt.Errorf("runc spec's config.json has no process")
	}
	proc["terminal"] = false
	proc["args"] = argv
	data, err = json.MarshalIndent(spec, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// medianRun times reps runs of `RUNTIME [flags] --root root run --bundle
// bundle ID`, each container with an id of its own, and returns the median in
// milliseconds.
func medianRun(reps int, runtime, root, bundle string, flags ...string) (float64, error) {
	var times []float64
	for i := 0; i < reps; i++ {
		id := fmt.Sprintf("bench-%d-%d", os.Getpid(), i)
		args := append(slices.Clone(flags), "--root", root, "run", "--bundle", bundle, id)
		cmd := exec.Command(runtime, args...)
		cmd.Dir = bundle
		start := time.Now()
		out, err := cmd.CombinedOutput()
		el := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(string(out)))
		}
		times = append(times, float64(el.Microseconds())/1000)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
