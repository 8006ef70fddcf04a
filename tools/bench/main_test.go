package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestMicroModesRun builds csrc/micro.c and runs every micro-benchmark
// mode natively with few iterations: a smoke test that the benchmark
// programs work, with no assertion on their speed.
func TestMicroModesRun(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildMicro(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range benchmarks {
		if b.mode == "" || b.hasSetup {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			v, err := runMicro([]string{bin, b.name, strconv.Itoa(20)})
			if err != nil {
				t.Fatal(err)
			}
			if v <= 0 {
				t.Errorf("%s: %v ns/op, want a positive figure", b.name, v)
			}
		})
	}
	if v, err := runMicro([]string{bin, "sysemu", "20"}); err != nil || v <= 0 {
		t.Errorf("sysemu: %v ns/op, %v", v, err)
	}
	if _, err := runMicro([]string{bin, "no-such-mode", "1"}); err == nil || !strings.Contains(err.Error(), "unknown benchmark") {
		t.Errorf("unknown mode: err = %v, want an unknown benchmark error", err)
	}
}

// TestDirModeRuns runs the getdents mode natively on a small scale: it
// builds its own 10,000-file directory.
func TestDirModeRuns(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildMicro(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/dents"
	if v, err := runMicro([]string{bin, "getdents", "2", dir}); err != nil || v <= 0 {
		t.Fatalf("getdents: %v ns/op, %v", v, err)
	}
}

func TestMemoryNativeOnly(t *testing.T) {
	native, sandbox, err := memory(&env{nativeOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if native <= 0 || native > 64 || sandbox != 0 {
		t.Errorf("memory = %v MiB, %v; want a small positive native figure and no sandbox figure", native, sandbox)
	}
}

func TestStartupNativeOnly(t *testing.T) {
	native, sandbox, err := startup(&env{reps: 3, nativeOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if native <= 0 || sandbox != 0 {
		t.Errorf("startup = %v, %v; want a positive native figure and no sandbox figure", native, sandbox)
	}
}

func TestStatusKB(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string]float64
	}{
		{"status", "Name:\tsleep\nVmRSS:\t    1804 kB\nRssAnon:\t      96 kB\nThreads:\t1\n", map[string]float64{"VmRSS": 1804, "RssAnon": 96}},
		{"smaps_rollup", "00400000-7ffd [rollup]\nRss:                1800 kB\nPss:                 310 kB\n", map[string]float64{"Rss": 1800, "Pss": 310}},
		{"empty", "", map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statusKB(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}
