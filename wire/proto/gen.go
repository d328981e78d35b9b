// Package oracleproto holds the .proto files of the oracle system's wire
// messages and, in its sub-packages, the Go code protoc-gen-go generated from
// them. See README.md for how to regenerate.
package oracleproto

//go:generate sh -c "protoc -I . --go_out=. --go_opt=module=github.com/wsconverge/converge/wire/proto $(find . -name '*.proto' | LC_ALL=C sort)"
