// Package authv1beta1 is the Go code generated from cosmos.auth.v1beta1:
// BaseAccount and the Account query.
package authv1beta1
