// Package shim is containerd-shim-runsc-v1, Moat's containerd runtime v2
// shim: it serves containerd's task API (containerd.task.v2.Task) over
// ttrpc and drives the runsc binary through its runc-compatible CLI.
//
// The binary has three roles, picked by its last argument:
//   - start: containerd runs it with the bundle as cwd; it starts the
//     server (the same binary with "serve") on a socket named after the
//     namespace, id and containerd's address, and prints the socket's
//     address in the caller's dialect: a protobuf BootstrapResult when
//     stdin carries BootstrapParams (containerd 2.3 and later), a plain
//     address otherwise (containerd 1.6, which trims and dials it);
//   - serve: the long-lived server (service.go), a child subreaper that
//     reaps the sandbox processes runsc leaves behind (reaper.go);
//   - delete: cleans up a container whose shim died: runsc delete
//     --force, unmount the rootfs, and print a DeleteResponse.
//
// -v prints the version, -info the RuntimeInfo protobuf.
//
// Lock order in the server: service.mu, then process.startMu, then
// process.mu (see service); processIO.mu and Reaper.mu are leaves.
package shim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	bootstrap "github.com/containerd/containerd/api/runtime/bootstrap/v1"
	taskapi "github.com/containerd/containerd/api/runtime/task/v2"
	"github.com/containerd/containerd/api/types"
	"github.com/containerd/log"
	"github.com/containerd/ttrpc"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/moat-sandbox/moat/internal/atomicfile"
)

// RuntimeName is the runtime name containerd maps to this binary.
const RuntimeName = "io.containerd.runsc.v1"

// DefaultSocketDir is where shim sockets go, as containerd's own shims
// put theirs: short, since the socket name is a 64-character hash.
const DefaultSocketDir = "/run/containerd/s"

// flags are the command line of every role.
type flags struct {
	namespace     string
	address       string
	publishBinary string
	id            string
	bundle        string
	socket        string
	debug         bool
	version       bool
	info          bool
	action        string
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("containerd-shim-runsc-v1", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.namespace, "namespace", "", "namespace of the container")
	fs.StringVar(&f.address, "address", "", "containerd's grpc address")
	fs.StringVar(&f.publishBinary, "publish-binary", "", "containerd binary that publishes events")
	fs.StringVar(&f.id, "id", "", "id of the container")
	fs.StringVar(&f.bundle, "bundle", "", "path of the bundle (delete)")
	fs.StringVar(&f.socket, "socket", "", "internal: the socket serve listens on (fd 3)")
	fs.BoolVar(&f.debug, "debug", false, "debug logging")
	fs.BoolVar(&f.version, "v", false, "print the version and exit")
	fs.BoolVar(&f.info, "info", false, "print the RuntimeInfo protobuf and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.action = fs.Arg(0)
	if f.namespace == "" {
		f.namespace = os.Getenv("NAMESPACE")
	}
	if f.address == "" {
		f.address = os.Getenv("GRPC_ADDRESS")
	}
	return f, nil
}

// Main runs the shim with the command-line arguments args (without the
// program name) and returns its exit status.
func Main(args []string) int {
	f, err := parseFlags(args, os.Stderr)
	if err != nil {
		return 2
	}
	switch {
	case f.version:
		fmt.Printf("containerd-shim-runsc-v1:\n  Version: %s\n  Runtime: %s\n", Version, RuntimeName)
		return 0
	case f.info:
		if err := printInfo(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "containerd-shim-runsc-v1 -info: %v\n", err)
			return 1
		}
		return 0
	}
	switch f.action {
	case "start":
		err = start(f, os.Stdin, os.Stdout)
	case "delete":
		err = deleteContainer(f, os.Stdout)
	case "serve":
		err = serve(f)
	default:
		err = fmt.Errorf("unknown action %q (want start, delete, -v or -info)", f.action)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "containerd-shim-runsc-v1 %s: %v\n", f.action, err)
		return 1
	}
	return 0
}

// SocketPath is the socket of the shim serving id in namespace ns of the
// containerd at address.
func SocketPath(dir, address, ns, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(address, ns, id)))
	return filepath.Join(dir, hex.EncodeToString(sum[:]))
}

// readBootstrap reads BootstrapParams from stdin, which containerd 2.3
// and later write (and close). Older daemons leave stdin at /dev/null, or
// write the runtime options there (a protobuf Any). A terminal, an empty
// stdin or an Any gives nil.
func readBootstrap(stdin *os.File) (*bootstrap.BootstrapParams, error) {
	if stdin == nil {
		return nil, nil
	}
	if _, err := unix.IoctlGetTermios(int(stdin.Fd()), unix.TCGETS); err == nil {
		return nil, nil
	}
	ch := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(stdin, 1<<20))
		ch <- data
	}()
	var data []byte
	select {
	case data = <-ch:
	case <-time.After(5 * time.Second):
		return nil, nil
	}
	if len(data) == 0 || !isBootstrapParams(data) {
		return nil, nil
	}
	var p bootstrap.BootstrapParams
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("reading bootstrap params from stdin: %w", err)
	}
	return &p, nil
}

// isBootstrapParams tells BootstrapParams from the runtime options Any
// containerd 1.6 and 1.7 write to start's stdin. The two are
// indistinguishable by their first two fields (a string each); an Any has
// no others, while containerd always sends BootstrapParams with its
// version, addresses and binary (fields 4 to 7).
func isBootstrapParams(data []byte) bool {
	found := false
	err := walkProto(data, func(num protowire.Number, _ protowire.Type, _ []byte, _ uint64) error {
		if num > 2 {
			found = true
		}
		return nil
	})
	return err == nil && found
}

// start starts a server for this container (or finds the one already
// serving it) and prints its address.
func start(f *flags, stdin *os.File, stdout io.Writer) error {
	params, err := readBootstrap(stdin)
	if err != nil {
		return err
	}
	ttrpcAddress := os.Getenv("TTRPC_ADDRESS")
	sockDir := DefaultSocketDir
	if params != nil {
		if params.InstanceID != "" {
			f.id = params.InstanceID
		}
		if params.Namespace != "" {
			f.namespace = params.Namespace
		}
		if params.ContainerdGrpcAddress != "" {
			f.address = params.ContainerdGrpcAddress
		}
		if params.ContainerdTtrpcAddress != "" {
			ttrpcAddress = params.ContainerdTtrpcAddress
		}
		if params.ContainerdBinary != "" {
			f.publishBinary = params.ContainerdBinary
		}
		if params.SocketDir != nil && *params.SocketDir != "" {
			sockDir = *params.SocketDir
		}
	}
	if f.id == "" || f.namespace == "" {
		return fmt.Errorf("start needs -id and -namespace")
	}
	bundle, err := os.Getwd()
	if err != nil {
		return err
	}
	// The containers of a pod share the server of its sandbox (group.go).
	path := SocketPath(sockDir, f.address, f.namespace, groupID(bundle, f.id))
	address := "unix://" + path
	if conn, err := net.Dial("unix", path); err == nil {
		// A shim already serves this id: hand out its address.
		conn.Close()
		if err := atomicfile.WriteFile(filepath.Join(bundle, "address"), []byte(address), 0o600); err != nil {
			return err
		}
		return printAddress(stdout, address, params)
	}
	if err := os.MkdirAll(sockDir, 0o711); err != nil {
		return err
	}
	os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("listening on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		os.Remove(path)
		return err
	}
	lf, err := l.File()
	l.Close()
	if err != nil {
		os.Remove(path)
		return err
	}
	defer lf.Close()
	self, err := os.Executable()
	if err != nil {
		os.Remove(path)
		return err
	}
	args := []string{"-namespace", f.namespace, "-id", f.id, "-address", f.address,
		"-publish-binary", f.publishBinary, "-socket", path}
	if f.debug {
		args = append(args, "-debug")
	}
	cmd := exec.Command(self, append(args, "serve")...)
	cmd.Dir = bundle
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Env = append(os.Environ(), "TTRPC_ADDRESS="+ttrpcAddress)
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.Remove(path)
		return fmt.Errorf("starting the shim server: %w", err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	undo := func() {
		unix.Kill(pid, unix.SIGKILL)
		os.Remove(path)
	}
	if err := atomicfile.WriteFile(filepath.Join(bundle, "shim.pid"), []byte(strconv.Itoa(pid)), 0o600); err != nil {
		undo()
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(bundle, "address"), []byte(address), 0o600); err != nil {
		undo()
		return err
	}
	if err := adjustOOMScore(pid); err != nil {
		// Lowering the score needs CAP_SYS_RESOURCE: go on without it.
		fmt.Fprintf(os.Stderr, "containerd-shim-runsc-v1: warning: %v\n", err)
	}
	return printAddress(stdout, address, params)
}

// printAddress prints the address as the caller reads it.
func printAddress(w io.Writer, address string, params *bootstrap.BootstrapParams) error {
	if params == nil {
		_, err := io.WriteString(w, address)
		return err
	}
	data, err := proto.Marshal(&bootstrap.BootstrapResult{Version: 2, Address: address, Protocol: "ttrpc"})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// adjustOOMScore gives the server the score of its caller (containerd)
// plus one, as containerd's shims do, so the OOM killer prefers the shim
// to containerd.
func adjustOOMScore(pid int) error {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", os.Getppid()))
	if err != nil {
		return err
	}
	score, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	score = min(score+1, 1000)
	path := fmt.Sprintf("/proc/%d/oom_score_adj", pid)
	if err := os.WriteFile(path, []byte(strconv.Itoa(score)), 0); err != nil {
		return fmt.Errorf("setting oom_score_adj to %d: %w", score, err)
	}
	return nil
}

// serve runs the task service on the socket at fd 3 until Shutdown.
func serve(f *flags) error {
	ctx := log.WithLogger(context.Background(), log.L.WithFields(log.Fields{
		"runtime": RuntimeName, "namespace": f.namespace, "id": f.id,
	}))
	if fifo, err := os.OpenFile("log", os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
		unix.SetNonblock(int(fifo.Fd()), false)
		log.L.Logger.SetOutput(fifo)
	}
	log.SetFormat(log.TextFormat)
	if f.debug {
		log.SetLevel("debug")
	}
	signal.Ignore(unix.SIGPIPE)
	lf := os.NewFile(3, "socket")
	fl, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return fmt.Errorf("socket at fd 3: %w", err)
	}
	done := make(chan struct{})
	pub := newForwarder(f.namespace, os.Getenv("TTRPC_ADDRESS"), f.publishBinary, f.address)
	svc := newService(f.namespace, pub, func() { close(done) })
	reaper, err := NewReaper(svc.reaped)
	if err != nil {
		return err
	}
	svc.reaper = reaper
	go dumpStacksOnSIGUSR1(ctx)
	server, err := ttrpc.NewServer(
		ttrpc.WithServerHandshaker(ttrpc.UnixSocketRequireSameUser()),
		ttrpc.WithUnaryServerInterceptor(logCalls),
	)
	if err != nil {
		return err
	}
	registerTaskService(server, svc)
	go func() {
		if err := server.Serve(ctx, fl); err != nil && !errors.Is(err, ttrpc.ErrServerClosed) {
			log.G(ctx).WithError(err).Error("serving")
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)
	select {
	case <-done:
	case sig := <-sigs:
		log.G(ctx).WithField("signal", sig).Info("shim stopping")
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	server.Shutdown(sctx)
	server.Close()
	pub.Close()
	if f.socket != "" {
		os.Remove(f.socket)
	}
	return nil
}

// deleteContainer cleans up after a shim that died: the container's
// sandbox (runsc delete --force) and rootfs mounts. It prints the
// DeleteResponse containerd reads.
func deleteContainer(f *flags, stdout io.Writer) error {
	bundle := f.bundle
	if bundle == "" {
		var err error
		if bundle, err = os.Getwd(); err != nil {
			return err
		}
	}
	if f.id == "" {
		return fmt.Errorf("delete needs -id")
	}
	opts, err := readOptions(bundle)
	if err != nil {
		return err
	}
	if opts.Root == "" {
		opts.Root = filepath.Join("/run/containerd/runsc", f.namespace)
	}
	reaper, err := NewReaper(nil)
	if err != nil {
		return err
	}
	svc := &service{namespace: f.namespace, reaper: reaper}
	rs, err := svc.runscFor(opts, bundle)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := rs.Delete(ctx, f.id, true); err != nil {
			fmt.Fprintf(os.Stderr, "containerd-shim-runsc-v1 delete: runsc delete: %v\n", err)
		}
		cancel()
	}
	if err := unmountAll(filepath.Join(bundle, "rootfs")); err != nil {
		return err
	}
	removeDeadSocket(bundle)
	data, err := proto.Marshal(&taskapi.DeleteResponse{
		ExitedAt:   timestamppb.Now(),
		ExitStatus: 128 + uint32(unix.SIGKILL),
	})
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}

// removeDeadSocket removes the socket named in the bundle's address file
// when no shim listens on it any more (a shim killed by SIGKILL leaves it).
func removeDeadSocket(bundle string) {
	data, err := os.ReadFile(filepath.Join(bundle, "address"))
	if err != nil {
		return
	}
	path := strings.TrimPrefix(strings.TrimSpace(string(data)), "unix://")
	if path == "" || path[0] != '/' {
		return
	}
	conn, err := net.Dial("unix", path)
	if err == nil {
		conn.Close()
		return
	}
	if errors.Is(err, unix.ECONNREFUSED) {
		os.Remove(path)
	}
}

// printInfo reads the runtime options (a protobuf Any) from stdin and
// prints the RuntimeInfo protobuf, with runsc's OCI features.
func printInfo(stdin io.Reader, stdout io.Writer) error {
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return err
	}
	info := &types.RuntimeInfo{
		Name:    RuntimeName,
		Version: &types.RuntimeVersion{Version: Version},
	}
	var opts Options
	if len(data) > 0 {
		var a anypb.Any
		if err := proto.Unmarshal(data, &a); err != nil {
			return fmt.Errorf("reading options: %w", err)
		}
		if opts, err = ParseRuntimeOptions(a.TypeUrl, a.Value); err != nil {
			return err
		}
		info.Options = &a
	}
	bin := opts.BinaryName
	if bin == "" {
		bin = "runsc"
	}
	if out, err := exec.Command(bin, "features").Output(); err == nil {
		info.Features = &anypb.Any{
			TypeUrl: "types.containerd.io/opencontainers/runtime-spec/1/features/Features",
			Value:   out,
		}
	}
	out, err := proto.Marshal(info)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// logCalls logs each call at debug level, and its error at warning level.
func logCalls(ctx context.Context, unmarshal ttrpc.Unmarshaler, info *ttrpc.UnaryServerInfo, method ttrpc.Method) (any, error) {
	log.G(ctx).WithField("method", info.FullMethod).Debug("call")
	resp, err := method(ctx, unmarshal)
	if err != nil {
		log.G(ctx).WithError(err).WithField("method", info.FullMethod).Warn("call failed")
	}
	return resp, err
}

// dumpStacksOnSIGUSR1 writes every goroutine's stack to the log on
// SIGUSR1, for debugging a stuck shim.
func dumpStacksOnSIGUSR1(ctx context.Context) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGUSR1)
	for range ch {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		log.G(ctx).Infof("goroutine stacks:\n%s", buf)
	}
}
