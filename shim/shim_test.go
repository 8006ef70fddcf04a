package shim

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bootstrap "github.com/containerd/containerd/api/runtime/bootstrap/v1"
	taskv2 "github.com/containerd/containerd/api/runtime/task/v2"
	taskv3 "github.com/containerd/containerd/api/runtime/task/v3"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// mainEnv makes the test binary run the shim's Main instead of the tests,
// so that `start` can start it again as the server.
const mainEnv = "MOAT_SHIM_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runShim runs the test binary as the shim with args, in dir, with stdin.
func runShim(t *testing.T, dir string, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), mainEnv+"=1", "TTRPC_ADDRESS=", "GRPC_ADDRESS=", "NAMESPACE=")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("shim %q stderr: %s", args, stderr.String())
	}
	return out, err
}

// dialShim connects to a shim's address.
func dialShim(t *testing.T, address string) *ttrpc.Client {
	t.Helper()
	path, ok := strings.CutPrefix(address, "unix://")
	if !ok {
		t.Fatalf("address %q is not unix://", address)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dialing the shim: %v", err)
	}
	c := ttrpc.NewClient(conn)
	t.Cleanup(func() { c.Close() })
	return c
}

// shutdownShim asks the shim to stop and waits for its socket to go.
func shutdownShim(t *testing.T, c *ttrpc.Client, address string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	taskv2.NewTTRPCTaskClient(c).Shutdown(ctx, &taskv2.ShutdownRequest{ID: "x"})
	path := strings.TrimPrefix(address, "unix://")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shim's socket %s is still there after Shutdown", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStartDialects(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for the default socket directory")
	}
	sockDir, err := os.MkdirTemp("", "moat-shim-s")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	optionsAny, err := proto.Marshal(&anypb.Any{TypeUrl: "runtimeoptions.v1.Options", Value: []byte{0x12, 0x02, '/', 'x'}})
	if err != nil {
		t.Fatal(err)
	}
	params, err := proto.Marshal(&bootstrap.BootstrapParams{
		InstanceID:             "boot1",
		Namespace:              "ns2",
		ContainerdVersion:      "v2.4.0",
		ContainerdTtrpcAddress: "/nonexistent.ttrpc",
		ContainerdGrpcAddress:  "/nonexistent",
		ContainerdBinary:       "/nonexistent-containerd",
		SocketDir:              &sockDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		stdin    []byte
		args     []string
		protobuf bool
		dir      string
	}{
		{name: "containerd 1.6 plain", args: []string{"-namespace", "ns1", "-id", "plain1", "-address", "/nonexistent", "start"}, dir: DefaultSocketDir},
		{name: "runtime options on stdin", stdin: optionsAny, args: []string{"-namespace", "ns1", "-id", "opts1", "-address", "/nonexistent", "start"}, dir: DefaultSocketDir},
		{name: "bootstrap params", stdin: params, args: []string{"start"}, protobuf: true, dir: sockDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle := t.TempDir()
			out, err := runShim(t, bundle, tc.stdin, tc.args...)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			address := string(out)
			if tc.protobuf {
				var res bootstrap.BootstrapResult
				if err := proto.Unmarshal(out, &res); err != nil {
					t.Fatalf("start's output %q is not a BootstrapResult: %v", out, err)
				}
				if res.Version != 2 || res.Protocol != "ttrpc" {
					t.Errorf("BootstrapResult = %v", &res)
				}
				address = res.Address
			}
			if !strings.HasPrefix(address, "unix://"+tc.dir+"/") {
				t.Fatalf("address %q not in %s", address, tc.dir)
			}
			if data, _ := os.ReadFile(filepath.Join(bundle, "address")); string(data) != address {
				t.Errorf("bundle address file %q, want %q", data, address)
			}
			c := dialShim(t, address)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err := taskv2.NewTTRPCTaskClient(c).Connect(ctx, &taskv2.ConnectRequest{ID: "x"})
			if err != nil || resp.ShimPid == 0 || resp.Version != Version {
				t.Errorf("v2 Connect = %v, %v", resp, err)
			}
			resp3, err := taskv3.NewTTRPCTaskClient(c).Connect(ctx, &taskv3.ConnectRequest{ID: "x"})
			if err != nil || resp3.ShimPid != resp.ShimPid {
				t.Errorf("v3 Connect = %v, %v", resp3, err)
			}
			// A second start for the same id finds the running shim.
			out2, err := runShim(t, bundle, tc.stdin, tc.args...)
			if err != nil || !bytes.Equal(out2, out) {
				t.Errorf("second start printed %q (%v), want %q", out2, err, out)
			}
			shutdownShim(t, c, address)
		})
	}
}

func TestServiceErrors(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for the default socket directory")
	}
	bundle := t.TempDir()
	out, err := runShim(t, bundle, nil, "-namespace", "ns1", "-id", "errs1", "-address", "/nonexistent", "start")
	if err != nil {
		t.Fatal(err)
	}
	c := dialShim(t, string(out))
	defer shutdownShim(t, c, string(out))
	client := taskv2.NewTTRPCTaskClient(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		call func() error
		is   func(error) bool
	}{
		{"checkpoint", func() error {
			_, err := client.Checkpoint(ctx, &taskv2.CheckpointTaskRequest{ID: "errs1"})
			return err
		}, errdefs.IsNotImplemented},
		{"state of unknown", func() error {
			_, err := client.State(ctx, &taskv2.StateRequest{ID: "nope"})
			return err
		}, errdefs.IsNotFound},
		{"kill of unknown", func() error {
			_, err := client.Kill(ctx, &taskv2.KillRequest{ID: "nope", Signal: 9})
			return err
		}, errdefs.IsNotFound},
		{"create without bundle", func() error {
			_, err := client.Create(ctx, &taskv2.CreateTaskRequest{ID: "c"})
			return err
		}, errdefs.IsInvalidArgument},
		{"create with bad options", func() error {
			_, err := client.Create(ctx, &taskv2.CreateTaskRequest{ID: "c", Bundle: bundle, Options: &anypb.Any{TypeUrl: "foo.Bar"}})
			return err
		}, errdefs.IsInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errgrpc.ToNative(tc.call())
			if err == nil || !tc.is(err) {
				t.Errorf("got %v", err)
			}
		})
	}
}

func TestVersionAndInfo(t *testing.T) {
	out, err := runShim(t, t.TempDir(), nil, "-v")
	if err != nil || !strings.Contains(string(out), Version) {
		t.Errorf("-v: %q, %v", out, err)
	}
	out, err = runShim(t, t.TempDir(), []byte{}, "-info")
	if err != nil {
		t.Fatalf("-info: %v", err)
	}
	var info struct{}
	_ = info
	if !bytes.Contains(out, []byte(RuntimeName)) {
		t.Errorf("-info output lacks the runtime name: %q", out)
	}
}

func TestIsBootstrapParams(t *testing.T) {
	anyBytes, _ := proto.Marshal(&anypb.Any{TypeUrl: "containerd.runc.v1.Options", Value: []byte{0x30, 0x01}})
	params, _ := proto.Marshal(&bootstrap.BootstrapParams{InstanceID: "a", Namespace: "b", ContainerdVersion: "v2.4"})
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"options any", anyBytes, false},
		{"bootstrap params", params, true},
		{"garbage", []byte{0xff, 0xff}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isBootstrapParams(tc.data); got != tc.want {
				t.Errorf("isBootstrapParams = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSocketPath(t *testing.T) {
	a := SocketPath("/run/containerd/s", "/run/containerd/containerd.sock", "default", "c1")
	b := SocketPath("/run/containerd/s", "/run/containerd/containerd.sock", "default", "c2")
	c := SocketPath("/run/containerd/s", "/tmp/other.sock", "default", "c1")
	if a == b || a == c || len(a) > 100 {
		t.Errorf("socket paths %q %q %q: want distinct and short", a, b, c)
	}
}
