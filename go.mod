module github.com/moat-sandbox/moat

go 1.26.8

require (
	github.com/google/subcommands v1.2.0 // indirect
	github.com/opencontainers/runtime-spec v1.3.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
