package main

import (
	"os/exec"
	"testing"
)

// TestRuncStartupNativeOnly runs the runc half of runc_startup on a small
// scale: the bundle is good enough for runc, the reference runtime.
func TestRuncStartupNativeOnly(t *testing.T) {
	if _, err := exec.LookPath("runc"); err != nil {
		t.Skip("runc is not installed (apt-get install runc)")
	}
	native, sandbox, err := runcStartup.run(&env{reps: 2, nativeOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if native <= 0 || sandbox != 0 {
		t.Errorf("runc_startup = %v, %v; want a positive runc figure and no sandbox figure", native, sandbox)
	}
}
