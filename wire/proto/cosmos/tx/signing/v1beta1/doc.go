// Package signingv1beta1 is the Go code generated from cosmos.tx.signing.v1beta1:
// the SignMode enum.
package signingv1beta1
