package shim

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"

	eventsapi "github.com/containerd/containerd/api/services/ttrpc/events/v1"
	"github.com/containerd/containerd/api/types"
	"github.com/containerd/log"
	"github.com/containerd/ttrpc"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Event topics, as containerd names them.
const (
	TopicTaskCreate       = "/tasks/create"
	TopicTaskStart        = "/tasks/start"
	TopicTaskExit         = "/tasks/exit"
	TopicTaskDelete       = "/tasks/delete"
	TopicTaskExecAdded    = "/tasks/exec-added"
	TopicTaskExecStarted  = "/tasks/exec-started"
	TopicTaskPaused       = "/tasks/paused"
	TopicTaskResumed      = "/tasks/resumed"
	TopicTaskOOM          = "/tasks/oom"
	TopicTaskCheckpointed = "/tasks/checkpointed"
)

// Publisher sends events to containerd, in the order Publish was called.
type Publisher interface {
	Publish(ctx context.Context, topic string, event proto.Message)
}

// forwarder publishes events through containerd's ttrpc events service
// (containerd.services.events.ttrpc.v1.Events/Forward) at TTRPC_ADDRESS,
// or, without that address, by running containerd's `publish` command
// (the -publish-binary). One goroutine sends the queue in order; a failed
// send is retried a few times, reconnecting, and then logged and dropped.
type forwarder struct {
	namespace     string
	ttrpcAddress  string
	publishBinary string
	grpcAddress   string

	queue chan *types.Envelope
	done  chan struct{}

	// client is used only by the sending goroutine.
	client *ttrpc.Client

	closeOnce sync.Once
}

// newForwarder starts a forwarder for namespace ns.
func newForwarder(ns, ttrpcAddress, publishBinary, grpcAddress string) *forwarder {
	f := &forwarder{
		namespace:     ns,
		ttrpcAddress:  strings.TrimPrefix(ttrpcAddress, "unix://"),
		publishBinary: publishBinary,
		grpcAddress:   grpcAddress,
		queue:         make(chan *types.Envelope, 256),
		done:          make(chan struct{}),
	}
	go f.run()
	return f
}

// Publish queues event under topic.
func (f *forwarder) Publish(ctx context.Context, topic string, event proto.Message) {
	a, err := typeurl.MarshalAnyToProto(event)
	if err != nil {
		log.G(ctx).WithError(err).WithField("topic", topic).Error("marshaling event")
		return
	}
	f.queue <- &types.Envelope{
		Timestamp: timestamppb.Now(),
		Namespace: f.namespace,
		Topic:     topic,
		Event:     a,
	}
}

// Close sends what is queued (for up to a few seconds) and stops.
func (f *forwarder) Close() {
	f.closeOnce.Do(func() {
		close(f.queue)
		select {
		case <-f.done:
		case <-time.After(5 * time.Second):
		}
	})
}

func (f *forwarder) run() {
	defer close(f.done)
	for env := range f.queue {
		var err error
		for try := 0; try < 5; try++ {
			if err = f.send(env); err == nil {
				break
			}
			time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
		}
		if err != nil {
			log.L.WithError(err).WithField("topic", env.Topic).Error("publishing event")
		}
	}
	if f.client != nil {
		f.client.Close()
	}
}

func (f *forwarder) send(env *types.Envelope) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if f.ttrpcAddress == "" {
		return f.sendBinary(ctx, env)
	}
	if f.client == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", f.ttrpcAddress)
		if err != nil {
			return fmt.Errorf("dialing containerd at %s: %w", f.ttrpcAddress, err)
		}
		f.client = ttrpc.NewClient(conn)
	}
	_, err := eventsapi.NewTTRPCEventsClient(f.client).Forward(ctx, &eventsapi.ForwardRequest{Envelope: env})
	if err != nil {
		f.client.Close()
		f.client = nil
		return err
	}
	return nil
}

// sendBinary runs `<publish-binary> --address A publish --topic T
// --namespace N` with the event, a protobuf Any, on stdin.
func (f *forwarder) sendBinary(ctx context.Context, env *types.Envelope) error {
	if f.publishBinary == "" {
		return fmt.Errorf("no containerd address to publish to")
	}
	data, err := proto.Marshal(env.Event)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, f.publishBinary, "--address", f.grpcAddress,
		"publish", "--topic", env.Topic, "--namespace", env.Namespace)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s publish: %w: %s", f.publishBinary, err, out)
	}
	return nil
}
