// Command containerd-shim-runsc-v1 is Moat's containerd runtime v2 shim
// (runtime io.containerd.runsc.v1); see package shim.
package main

import (
	"os"

	"github.com/moat-sandbox/moat/shim"
)

func main() {
	os.Exit(shim.Main(os.Args[1:]))
}
