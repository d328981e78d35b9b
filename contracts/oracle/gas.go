package oracle

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// ParseGasPrice parses gas.prices: a plain non-negative decimal number
// ("630000000000", "0.25") with no denom, no sign and no exponent (D29: the
// denom agxn is implied).
func ParseGasPrice(s string) (*big.Rat, error) {
	digits, dot, frac := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if dot {
				frac++
			} else {
				digits++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return nil, fmt.Errorf("want a plain decimal number without denom (%s is implied), got %q", Denom, s)
		}
	}
	if digits == 0 || (dot && frac == 0) {
		return nil, fmt.Errorf("want a plain decimal number without denom (%s is implied), got %q", Denom, s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("not a decimal number: %q", s)
	}
	return r, nil
}

// FeeAmount is the fee of D29 in agxn, as the decimal integer string a Coin
// carries: ceil(price × gas), computed exactly.
func FeeAmount(price string, gas uint64) (string, error) {
	if fee, ok := feeSmall(price, gas); ok {
		return fee, nil
	}
	p, err := ParseGasPrice(price)
	if err != nil {
		return "", fmt.Errorf("gas price: %w", err)
	}
	return ceilRat(new(big.Rat).Mul(p, new(big.Rat).SetUint64(gas))).String(), nil
}

// feeSmall is FeeAmount in machine words, for a price ParseGasPrice accepts
// whose digits fit a uint64 with at most 19 fractional ones and a fee below
// 2^64 (false otherwise, and the rationals do it). The price is m/10^k
// exactly, so ceil(m×gas/10^k) over a 128-bit product is the same integer
// without the dozen allocations the rationals cost on every submission.
func feeSmall(price string, gas uint64) (string, bool) {
	var m uint64
	digits, frac, dot := 0, 0, false
	for i := 0; i < len(price); i++ {
		switch c := price[i]; {
		case c >= '0' && c <= '9':
			hi, lo := bits.Mul64(m, 10)
			var carry uint64
			m, carry = bits.Add64(lo, uint64(c-'0'), 0)
			if hi != 0 || carry != 0 {
				return "", false
			}
			if dot {
				frac++
			} else {
				digits++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return "", false
		}
	}
	if digits == 0 || (dot && frac == 0) || frac > 19 {
		return "", false
	}
	den := uint64(1)
	for range frac {
		den *= 10
	}
	hi, lo := bits.Mul64(m, gas)
	if hi >= den {
		return "", false // the quotient would not fit
	}
	q, r := bits.Div64(hi, lo, den)
	if r > 0 {
		if q == math.MaxUint64 {
			return "", false
		}
		q++
	}
	return strconv.FormatUint(q, 10), true
}

// AdjustGas is D5: the gas limit after an out-of-gas answer, ceil(gas ×
// adjustment). The adjustment is taken as the decimal it is written as (1.1
// is 11/10, not the binary double nearest to it), so 70000 × 1.1 is 77000 and
// not 77001. The result saturates at the largest uint64; a non-finite or
// non-positive adjustment leaves gas unchanged.
func AdjustGas(gas uint64, adjustment float64) uint64 {
	if math.IsNaN(adjustment) || math.IsInf(adjustment, 0) || adjustment <= 0 {
		return gas
	}
	adj, ok := new(big.Rat).SetString(strconv.FormatFloat(adjustment, 'f', -1, 64))
	if !ok {
		return gas
	}
	out := ceilRat(new(big.Rat).Mul(adj, new(big.Rat).SetUint64(gas)))
	if !out.IsUint64() {
		return math.MaxUint64
	}
	return out.Uint64()
}

// ceilRat is the ceiling of a non-negative rational.
func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
