package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/syscalls/linux"
)

// dockerLikeProfile allows every amd64 syscall but mkdir, mkdirat,
// symlink and symlinkat by name (plus names of other architectures, which
// are skipped), denies the rest with EPERM, gives symlink EXDEV through
// errnoRet, and allows clone only without namespace flags, as Docker's
// default profile does.
func dockerLikeProfile() *specs.LinuxSeccomp {
	deny := map[string]bool{"mkdir": true, "mkdirat": true, "symlink": true, "symlinkat": true, "clone": true}
	names := []string{"arm_fadvise64_64", "socketcall", "_llseek"}
	for _, s := range linux.AMD64().Table {
		if s.Name != "" && !deny[s.Name] {
			names = append(names, s.Name)
		}
	}
	exdev := uint(unix.EXDEV)
	eperm := uint(unix.EPERM)
	return &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &eperm,
		Architectures:   []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32},
		Syscalls: []specs.LinuxSyscall{
			{Names: names, Action: specs.ActAllow},
			{Names: []string{"symlink", "symlinkat"}, Action: specs.ActErrno, ErrnoRet: &exdev},
			{Names: []string{"clone"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Op: specs.OpMaskedEqual, Value: 0x7E020000, ValueTwo: 0},
			}},
		},
	}
}

func TestOCISeccompProfile(t *testing.T) {
	e := newOCIEnv(t)
	rootfs := filepath.Join(e.bundle, "rootfs")
	for _, app := range []string{"mkdir", "ln", "grep", "cat"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", app))
	}
	e.setArgs("sh", "-c", `mkdir /tmp/d 2>&1; echo mkdir=$?; ln -s a /tmp/l 2>&1; echo ln=$?; grep Seccomp /proc/self/status; (echo forked)`)
	path := filepath.Join(e.bundle, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s.Linux.Seccomp = dockerLikeProfile()
	b, _ = json.Marshal(&s)
	os.WriteFile(path, b, 0o644)

	code, stdout, stderr := e.run("run", "--bundle", e.bundle, "a")
	if code != 0 {
		t.Fatalf("run: status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"Operation not permitted\nmkdir=1\n",
		"Invalid cross-device link\nln=1\n",
		"Seccomp:\t2\nSeccomp_filters:\t1\n",
		"forked\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	// A profile the sandbox cannot enforce is refused at create.
	s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActNotify}
	b, _ = json.Marshal(&s)
	os.WriteFile(path, b, 0o644)
	code, _, stderr = e.run("create", "--bundle", e.bundle, "b")
	if code == 0 || !strings.Contains(stderr, "SCMP_ACT_NOTIFY is not supported") {
		t.Errorf("create with SCMP_ACT_NOTIFY: status %d, stderr %q", code, stderr)
	}
}

func TestFeaturesSeccomp(t *testing.T) {
	e := newOCIEnv(t)
	var f features.Features
	if err := json.Unmarshal([]byte(e.mustRun("features")), &f); err != nil {
		t.Fatal(err)
	}
	sc := f.Linux.Seccomp
	if sc == nil || sc.Enabled == nil || !*sc.Enabled {
		t.Fatalf("seccomp: %+v", sc)
	}
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	}
	if !has(sc.Actions, "SCMP_ACT_ERRNO") || has(sc.Actions, "SCMP_ACT_NOTIFY") || !has(sc.Operators, "SCMP_CMP_MASKED_EQ") || !has(sc.Archs, "SCMP_ARCH_X86_64") {
		t.Errorf("seccomp features: %+v", sc)
	}
}
