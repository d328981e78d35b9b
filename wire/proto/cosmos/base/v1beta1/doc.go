// Package basev1beta1 is the Go code generated from cosmos.base.v1beta1: Coin.
package basev1beta1
