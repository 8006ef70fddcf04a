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
		if b.unit != "ns/op" {
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
	if _, err := runMicro([]string{bin, "no-such-mode", "1"}); err == nil || !strings.Contains(err.Error(), "unknown benchmark") {
		t.Errorf("unknown mode: err = %v, want an unknown benchmark error", err)
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
