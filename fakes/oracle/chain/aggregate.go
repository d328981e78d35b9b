package chain

import (
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// aggregateDigits is how many fractional digits an aggregate keeps (the
// SDK's LegacyDec precision); the last one is rounded half away from zero.
const aggregateDigits = 18

// aggregate combines a round's values by rule (ORACLE-SPEC 4.5) in exact
// decimal arithmetic: AVG = sum / count, MIN, MAX, MEDIAN (the mean of the
// two middle values for an even count). Values that are not plain decimals
// are skipped and counted in unparsable; with none left the aggregate is
// "". An unspecified rule aggregates as AVG.
//
// The values are read as integers at a common scale (the most fractional
// digits among them), so every rule is integer arithmetic and one rounded
// division at the end.
func aggregate(rule oraclev1.AggregationRule, values []string) (result string, unparsable int) {
	var out [48]byte
	b, unparsable := appendAggregate(out[:0], rule, values)
	return string(b), unparsable
}

// appendAggregate appends aggregate's result to b: a block writes the
// results of all its rounds into one buffer, made one string.
func appendAggregate(b []byte, rule oraclev1.AggregationRule, values []string) (_ []byte, unparsable int) {
	var buf [8]dec // a round's values, on the stack
	decs := buf[:0]
	scale := 0
	for _, v := range values {
		neg, intPart, frac, ok := splitDecimal(v)
		if !ok {
			unparsable++
			continue
		}
		decs = append(decs, dec{intPart, frac, neg})
		scale = max(scale, len(frac))
	}
	if len(decs) == 0 {
		return b, unparsable
	}
	if out, ok := appendSmall(b, rule, decs, scale); ok {
		return out, unparsable
	}
	return append(b, aggregateBig(rule, decs, scale)...), unparsable
}

// dec is a plain decimal as aggregate reads it: its digits before and
// after the point (kept apart: joining them cost an allocation per value).
type dec struct {
	intPart, frac string
	neg           bool
}

// scale is the number of fractional digits.
func (d dec) scale() int { return len(d.frac) }

// digits are the digits without the point.
func (d dec) digits() string { return d.intPart + d.frac }

// uint reads the digits as strconv.ParseUint reads digits(): false when
// they overflow a uint64.
func (d dec) uint() (uint64, bool) {
	var u uint64
	for _, s := range [2]string{d.intPart, d.frac} {
		for i := 0; i < len(s); i++ {
			hi, lo := bits.Mul64(u, 10)
			var c uint64
			if lo, c = bits.Add64(lo, uint64(s[i]-'0'), 0); hi != 0 || c != 0 {
				return 0, false
			}
			u = lo
		}
	}
	return u, true
}

// aggregateBig is aggregate's arithmetic in big integers: any values.
func aggregateBig(rule oraclev1.AggregationRule, decs []dec, scale int) string {
	nums := make([]*big.Int, len(decs))
	for i, d := range decs {
		n := new(big.Int)
		if u, ok := d.uint(); ok {
			n.SetUint64(u) // the common case, without SetString's reader
		} else {
			n.SetString(d.digits(), 10) // digits only
		}
		if pad := scale - d.scale(); pad > 0 {
			n.Mul(n, pow10(pad))
		}
		if d.neg {
			n.Neg(n)
		}
		nums[i] = n
	}
	den := pow10(scale)
	var num *big.Int
	switch rule {
	case oraclev1.AggregationRule_AGGREGATION_RULE_MIN:
		num = slices.MinFunc(nums, (*big.Int).Cmp)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MAX:
		num = slices.MaxFunc(nums, (*big.Int).Cmp)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN:
		slices.SortFunc(nums, (*big.Int).Cmp)
		mid := len(nums) / 2
		num = nums[mid]
		if len(nums)%2 == 0 {
			num = new(big.Int).Add(nums[mid-1], nums[mid])
			den = new(big.Int).Lsh(den, 1)
		}
	default:
		num = new(big.Int)
		for _, n := range nums {
			num.Add(num, n)
		}
		den = new(big.Int).Mul(den, big.NewInt(int64(len(nums))))
	}
	return renderDecimal(num, den)
}

// maxSmallScale is the largest scale aggregateSmall takes: 10^19 is the
// largest power of ten a uint64 holds.
const maxSmallScale = 19

// aggregateSmall is aggregateBig's arithmetic in machine words, for the
// common round: non-negative values whose scaled integers, their sum and
// the denominator all fit a uint64 (false otherwise, and aggregateBig
// does it). Every step is exact, the division included (128 by 64 bits),
// so it gives aggregateBig's string; it saves the dozens of allocations
// the big integers cost on every round a run completes.
func aggregateSmall(rule oraclev1.AggregationRule, decs []dec, scale int) (string, bool) {
	var out [48]byte
	b, ok := appendSmall(out[:0], rule, decs, scale)
	return string(b), ok
}

// appendSmall appends aggregateSmall's result to b (b unchanged when it
// is false).
func appendSmall(b []byte, rule oraclev1.AggregationRule, decs []dec, scale int) ([]byte, bool) {
	if scale > maxSmallScale {
		return b, false
	}
	var buf [8]uint64
	nums := buf[:0]
	for _, d := range decs {
		u, ok := d.uint()
		if !ok || d.neg {
			return b, false
		}
		hi, n := bits.Mul64(u, pow10u(scale-d.scale()))
		if hi != 0 {
			return b, false
		}
		nums = append(nums, n)
	}
	den := pow10u(scale)
	var num uint64
	switch rule {
	case oraclev1.AggregationRule_AGGREGATION_RULE_MIN:
		num = slices.Min(nums)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MAX:
		num = slices.Max(nums)
	case oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN:
		slices.Sort(nums)
		mid := len(nums) / 2
		num = nums[mid]
		if len(nums)%2 == 0 {
			var c1, c2 uint64
			num, c1 = bits.Add64(nums[mid-1], nums[mid], 0)
			den, c2 = bits.Add64(den, den, 0)
			if c1 != 0 || c2 != 0 {
				return b, false
			}
		}
	default:
		for _, n := range nums {
			var c uint64
			if num, c = bits.Add64(num, n, 0); c != 0 {
				return b, false
			}
		}
		var hi uint64
		if hi, den = bits.Mul64(den, uint64(len(nums))); hi != 0 {
			return b, false
		}
	}
	return appendRenderSmall(b, num, den), true
}

// appendRenderSmall appends renderDecimal of num/den, in machine words:
// the integer part, then aggregateDigits fractional digits of the
// remainder (their quotient is below 10^18, so it fits), rounded half
// away from zero.
func appendRenderSmall(b []byte, num, den uint64) []byte {
	whole, rem := num/den, num%den
	hi, lo := bits.Mul64(rem, pow10u(aggregateDigits))
	frac, r := bits.Div64(hi, lo, den) // hi < den as rem < den
	if r >= den-r {                    // 2r >= den, without overflow
		frac++
		if frac == pow10u(aggregateDigits) {
			frac, whole = 0, whole+1
		}
	}
	if whole == 0 && frac == 0 {
		return append(b, '0')
	}
	b = strconv.AppendUint(b, whole, 10)
	if frac != 0 {
		var digits [aggregateDigits]byte
		for i := aggregateDigits - 1; i >= 0; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		b = append(b, '.')
		n := len(digits)
		for digits[n-1] == '0' { // frac != 0: a digit is not zero
			n--
		}
		b = append(b, digits[:n]...)
	}
	return b
}

// pow10u is 10^n for n <= maxSmallScale.
func pow10u(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

// splitDecimal reads a plain decimal: an optional '-', digits, and an
// optional '.' followed by digits ("101.5", "-3", "0.000001"); no exponent,
// no '+', no leading or trailing '.'.
func splitDecimal(s string) (neg bool, intPart, frac string, ok bool) {
	body, neg := strings.CutPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(body, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (frac == "" || !allDigits(frac))) {
		return false, "", "", false
	}
	return neg, intPart, frac, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pow10s caches 10^0 … 10^aggregateDigits+8, the scales decimals use.
var pow10s = func() []*big.Int {
	out := make([]*big.Int, aggregateDigits+9)
	p := big.NewInt(1)
	for i := range out {
		out[i] = new(big.Int).Set(p)
		p.Mul(p, big.NewInt(10))
	}
	return out
}()

// pow10 is 10^n; callers must not modify it.
func pow10(n int) *big.Int {
	if n < len(pow10s) {
		return pow10s[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// renderDecimal writes num/den (den > 0) as a plain decimal rounded to
// aggregateDigits fractional digits, half away from zero, without
// trailing zeros ("101.5", "3", "-0.25"); a result that rounds to zero is
// "0".
func renderDecimal(num, den *big.Int) string {
	q, r := new(big.Int).QuoRem(new(big.Int).Mul(new(big.Int).Abs(num), pow10(aggregateDigits)), den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if q.Sign() == 0 {
		return "0"
	}
	digits := q.String()
	if len(digits) <= aggregateDigits {
		digits = strings.Repeat("0", aggregateDigits-len(digits)+1) + digits
	}
	cut := len(digits) - aggregateDigits
	out := digits[:cut]
	if frac := strings.TrimRight(digits[cut:], "0"); frac != "" {
		out += "." + frac
	}
	if num.Sign() < 0 {
		out = "-" + out
	}
	return out
}
