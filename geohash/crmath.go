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

// sinTaylor and cosTaylor sum the series for |r| <= pi/4.
func sinTaylor(r dd) dd {
	r2 := r.mul(r)
	term, sum := r, r
	for k := 1; k < 30; k++ {
		term = term.mul(r2).div(dd{float64(2*k) * float64(2*k+1), 0}).neg()
		sum = sum.add(term)
		if math.Abs(term.hi) < 1e-34*math.Abs(sum.hi) {
			break
		}
	}
	return sum
}

func cosTaylor(r dd) dd {
	r2 := r.mul(r)
	term, sum := dd{1, 0}, dd{1, 0}
	for k := 1; k < 30; k++ {
		term = term.mul(r2).div(dd{float64(2*k-1) * float64(2*k), 0}).neg()
		sum = sum.add(term)
		if math.Abs(term.hi) < 1e-34 {
			break
		}
	}
	return sum
}

// ddSin and ddCos evaluate sine and cosine of a double-double: the
// reduced argument's quadrant picks the series and the sign (cos x is
// sin(x + pi/2), one quadrant on).
func ddSin(x dd) dd { return sinQuadrant(x, 0) }

func ddCos(x dd) dd { return sinQuadrant(x, 1) }

func sinQuadrant(x dd, shift int) dd {
	r, k := reduce(x)
	switch (k + shift) & 3 {
	case 0:
		return sinTaylor(r)
	case 1:
		return cosTaylor(r)
	case 2:
		return sinTaylor(r).neg()
	}
	return cosTaylor(r).neg()
}

// sin is the correctly rounded sine.
func sin(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= maxReduce {
		return math.Sin(x)
	}
	if x == 0 {
		return x
	}
	return ddSin(dd{x, 0}).hi
}

// cos is the correctly rounded cosine.
func cos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= maxReduce {
		return math.Cos(x)
	}
	return ddCos(dd{x, 0}).hi
}

// asin is the correctly rounded arc sine: Newton's method on sin in
// double-double from package math's estimate.
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
	x := dd{math.Asin(y), 0}
	target := dd{y, 0}
	for range 3 {
		step := ddSin(x).sub(target).div(ddCos(x))
		x = x.sub(step)
		if math.Abs(step.hi) < 1e-33*math.Abs(x.hi) {
			break
		}
	}
	return x.hi
}
