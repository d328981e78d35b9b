// Package keyringv1 is the Go code generated from cosmos.crypto.keyring.v1:
// the Record a Cosmos SDK keyring stores for each key.
package keyringv1
