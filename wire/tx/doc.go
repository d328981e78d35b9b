// Package tx builds, signs, decodes and hashes the oracle system's
// transactions, byte for byte as a Cosmos SDK chain and a CometBFT node see
// them (ORACLE-SPEC 3.5, 4.3, 6.6).
//
// Both sides use it: the daemon builds and signs a TxRaw (Build, with
// SubmissionMsg, RegisterMsg or UpdateMsg), and the simulated chain decodes it
// with the strict checks of CheckTx row 3 (Decode: ADR-027 canonical TxRaw,
// no unknown fields except non-critical ones in TxBody, known type URLs),
// runs the stateless checks of row 4 (ValidateBasic) and, in its verifying
// mode, checks the signature (VerifySignature). Every failure is a *CodeError
// carrying the SDK code the chain answers with. Hash gives the CometBFT tx
// hash.
//
// Encoding is protobuf's deterministic marshalling of the generated types in
// wire/proto: fields in ascending order, minimal varints, zero
// values omitted — the canonical form ADR-027 asks for.
package tx
