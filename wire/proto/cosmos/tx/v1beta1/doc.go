// Package txv1beta1 is the Go code generated from cosmos.tx.v1beta1: the
// transaction envelope (TxRaw, TxBody, AuthInfo, SignerInfo, ModeInfo, Fee,
// Tip) and the SignDoc that SIGN_MODE_DIRECT signs.
package txv1beta1
