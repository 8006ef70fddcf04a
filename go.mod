module github.com/moat-sandbox/moat

go 1.26.8

require (
	github.com/containerd/cgroups/v3 v3.1.3
	github.com/containerd/containerd/api v1.12.0
	github.com/containerd/errdefs v1.0.0
	github.com/containerd/errdefs/pkg v0.3.0
	github.com/containerd/log v0.2.0
	github.com/containerd/ttrpc v1.2.10
	github.com/containerd/typeurl/v2 v2.3.0
	github.com/google/subcommands v1.2.0
	github.com/opencontainers/runtime-spec v1.3.0
	golang.org/x/sys v0.49.0
	google.golang.org/protobuf v1.36.11
)

require (
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260226221140-a57be14db171 // indirect
	google.golang.org/grpc v1.81.1 // indirect
)
