// Package ethsecp256k1 is the Go code generated from
// cosmos.evm.crypto.v1.ethsecp256k1: the eth_secp256k1 public and private key
// messages.
package ethsecp256k1
