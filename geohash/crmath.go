package geohash

import "math"

// Redis computes distances with glibc's sin, cos and asin, which round
// almost always correctly (within 0.55 ULP); Go's math package is off by
// one ULP often enough that a distance stored by GEOSEARCHSTORE STOREDIST
// (printed with 17 digits) differs. So the trigonometry here is evaluated
// in double-double arithmetic (about 106 bits) and rounded once, which
// gives the correctly rounded result, and with it glibc's, except in cases
// too rare to meet.

// dd is a double-double: the unevaluated sum hi+lo, |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

// twoSum returns a+b exactly as s+e.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// quickTwoSum is twoSum for |a| >= |b|.
func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - (s - a)
	return s, e
}

// twoProd returns a*b exactly as p+e.
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	e = math.FMA(a, b, -p)
	return p, e
}

func (x dd) add(y dd) dd {
	s, e := twoSum(x.hi, y.hi)
	t, f := twoSum(x.lo, y.lo)
	e += t
	s, e = quickTwoSum(s, e)
	e += f
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) sub(y dd) dd { return x.add(y.neg()) }

func (x dd) mul(y dd) dd {
	p, e := twoProd(x.hi, y.hi)
	e += float64(x.hi*y.lo) + float64(x.lo*y.hi)
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func (x dd) mulF(f float64) dd {
	p, e := twoProd(x.hi, f)
	e += float64(x.lo * f)
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.sub(y.mulF(q1))
	q2 := r.hi / y.hi
	r = r.sub(y.mulF(q2))
	q3 := r.hi / y.hi
	s, e := quickTwoSum(q1, q2)
	return dd{s, e}.add(dd{q3, 0})
}

// pi/2 in three parts for the argument reduction.
const (
	pio2a = 1.5707963267948966
	pio2b = 6.123233995736766e-17
	pio2c = -1.4973849048591698e-33
)

// reduce returns r and k with x = r + k*pi/2, |r| <= pi/4 (about), for
// |x| below maxReduce.
func reduce(x dd) (dd, int) {
	k := math.Round(x.hi / pio2a)
	if k == 0 {
		return x, 0
	}
	r := x
	for _, part := range [...]float64{pio2a, pio2b, pio2c} {
		p, e := twoProd(k, part)
		r = r.sub(dd{p, e})
	}
	return r, int(int64(k) & 3)
}

// maxReduce bounds the arguments reduce handles exactly enough; larger
// ones (search radii beyond the Earth's size) fall back to package math.
const maxReduce = 1 << 20

// invFact[n] is 1/n! as a double-double (mpmath at 300 bits).
var invFact = [32]dd{
	{1.0, 0.0},
	{1.0, 0.0},
	{0.5, 0.0},
	{0.16666666666666666, 9.25185853854297e-18},
	{0.041666666666666664, 2.3129646346357427e-18},
	{0.008333333333333333, 1.1564823173178714e-19},
	{0.001388888888888889, -5.300543954373577e-20},
	{0.0001984126984126984, 1.7209558293420705e-22},
	{2.48015873015873e-05, 2.1511947866775882e-23},
	{2.7557319223985893e-06, -1.858393274046472e-22},
	{2.755731922398589e-07, 2.3767714622250297e-23},
	{2.505210838544172e-08, -1.448814070935912e-24},
	{2.08767569878681e-09, -1.20734505911326e-25},
	{1.6059043836821613e-10, 1.2585294588752098e-26},
	{1.1470745597729725e-11, 2.0655512752830745e-28},
	{7.647163731819816e-13, 7.03872877733453e-30},
	{4.779477332387385e-14, 4.399205485834081e-31},
	{2.8114572543455206e-15, 1.6508842730861433e-31},
	{1.5619206968586225e-16, 1.1910679660273754e-32},
	{8.22063524662433e-18, 2.2141894119604265e-34},
	{4.110317623312165e-19, 1.4412973378659527e-36},
	{1.9572941063391263e-20, -1.3643503830087908e-36},
	{8.896791392450574e-22, -7.911402614872376e-38},
	{3.868170170630684e-23, -8.843177655482344e-40},
	{1.6117375710961184e-24, -3.6846573564509766e-41},
	{6.446950284384474e-26, -1.9330404233703465e-42},
	{2.4795962632247976e-27, -1.2953730964765229e-43},
	{9.183689863795546e-29, 1.4303150396787322e-45},
	{3.279889237069838e-30, 1.5117542744029879e-46},
	{1.1309962886447716e-31, 1.0498015412959506e-47},
	{3.7699876288159054e-33, 2.5870347832750324e-49},
	{1.216125041553518e-34, 5.586290567888806e-51},
}

// Terms of the sine and cosine series: allTerms reach 2^-110 for
// |r| <= pi/4; the fast evaluation sums the first ddTerms in double-double
// and the rest in float64, whose rounding errors are then below 2^-66 of
// the result.
const (
	allTerms = 16
	ddTerms  = 4
	// fastErr bounds the fast evaluation's relative error, with margin.
	fastErr = 0x1p-62
)

// series is sum over k < terms of (-1)^k z^k / (2k+off)!, by Horner's
// rule, the terms from exact on in float64.
func series(z dd, off, exact, terms int) dd {
	coef := func(k int) dd {
		c := invFact[2*k+off]
		if k%2 == 1 {
			return c.neg()
		}
		return c
	}
	var acc dd
	if terms > exact {
		t := 0.0
		for k := terms - 1; k >= exact; k-- {
			t = coef(k).hi + float64(z.hi*t)
		}
		acc = dd{t, 0}
	}
	for k := exact - 1; k >= 0; k-- {
		acc = coef(k).add(z.mul(acc))
	}
	return acc
}

// sinQuadrant is sin(x + shift*pi/2) (cos for shift 1), with the leading
// exact terms of the series in double-double.
func sinQuadrant(x dd, shift, exact int) dd {
	r, k := reduce(x)
	z := r.mul(r)
	switch (k + shift) & 3 {
	case 0:
		return r.mul(series(z, 1, exact, allTerms))
	case 1:
		return series(z, 0, exact, allTerms)
	case 2:
		return r.mul(series(z, 1, exact, allTerms)).neg()
	}
	return series(z, 0, exact, allTerms).neg()
}

// rounded returns v rounded to float64 and whether every value within e
// of it rounds the same way (Ziv's test).
func rounded(v dd, e float64) (float64, bool) {
	a := v.hi + (v.lo + e)
	b := v.hi + (v.lo - e)
	return a, a == b
}

// sin is the correctly rounded sine.
func sin(x float64) float64 { return sinOrCos(x, 0) }

// cos is the correctly rounded cosine.
func cos(x float64) float64 { return sinOrCos(x, 1) }

// sinOrCos evaluates fast, and again with every term in double-double
// when the fast result is too near a rounding boundary.
func sinOrCos(x float64, shift int) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= maxReduce:
		if shift == 0 {
			return math.Sin(x)
		}
		return math.Cos(x)
	case x == 0 && shift == 0:
		return x
	}
	v := sinQuadrant(dd{x, 0}, shift, ddTerms)
	if f, ok := rounded(v, fastErr*math.Abs(v.hi)); ok {
		return f
	}
	return sinQuadrant(dd{x, 0}, shift, allTerms).hi
}

// asin is the correctly rounded arc sine: one Newton step on sin from
// package math's estimate, checked by Ziv's test, else Newton's method
// with every term in double-double.
func asin(y float64) float64 {
	switch {
	case math.IsNaN(y) || y > 1 || y < -1:
		return math.NaN()
	case y == 0:
		return y
	case y == 1:
		return pio2a
	case y == -1:
		return -pio2a
	}
	x0 := math.Asin(y)
	target := dd{y, 0}
	s := sinQuadrant(dd{x0, 0}, 0, ddTerms)
	c := sinQuadrant(dd{x0, 0}, 1, ddTerms)
	x1 := dd{x0, 0}.sub(s.sub(target).div(c))
	// The step's error: sin's (relative fastErr) over cos, plus Newton's
	// quadratic term for an estimate off by far less than 2^-45.
	e := (fastErr*math.Abs(s.hi) + 0x1p-90*x0*x0) / math.Abs(c.hi)
	if f, ok := rounded(x1, e); ok {
		return f
	}
	x := dd{x0, 0}
	for range 3 {
		step := sinQuadrant(x, 0, allTerms).sub(target).div(sinQuadrant(x, 1, allTerms))
		x = x.sub(step)
		if math.Abs(step.hi) < 1e-33*math.Abs(x.hi) {
			break
		}
	}
	return x.hi
}
