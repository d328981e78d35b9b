// Package keys is the oracle system's account cryptography: eth_secp256k1
// keys as cosmos/evm chains use them, their bech32 "guru" addresses, and the
// signers that sign a transaction's SignDoc.
//
//   - An address is the last 20 bytes of the Keccak-256 of the 64-byte
//     uncompressed public point (X‖Y), in bech32 with the prefix "guru"
//     (ORACLE-SPEC 6.6).
//   - A signature is 65 bytes [R‖S‖V] over the Keccak-256 of the SignDoc
//     bytes, deterministic (RFC 6979) and with a low S, as go-ethereum's
//     crypto.Sign makes it; verification checks R‖S against the public key
//     and, like the chain, ignores V.
//   - The stand-in signer (D26) is what the reference daemon uses by default:
//     a real key and address, but a cheap deterministic 65-byte signature
//     that only the chain's optional verifying mode would reject.
//
// The curve arithmetic is decred's secp256k1, Keccak is golang.org/x/crypto's
// legacy Keccak-256 and bech32 is decred's; nothing here is hand-rolled
// cryptography.
package keys
