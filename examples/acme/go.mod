module example.com/acme

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1
	github.com/wsconverge/converge v0.0.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/creachadair/taskgroup v0.14.5 // indirect
	github.com/decred/dcrd/bech32 v1.1.4 // indirect
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1 // indirect
	github.com/dvsekhvalnov/jose2go v1.11.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
	mvdan.cc/sh/v3 v3.12.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)

replace github.com/wsconverge/converge => ../..
