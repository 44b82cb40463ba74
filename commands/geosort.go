package commands

// pqsort is Redis's pqsort (pqsort.c): Bentley and McIlroy's quicksort,
// as NetBSD's qsort has it, that only sorts the partitions overlapping
// positions lrange..rrange. A search with COUNT sorts its points with it,
// so which of the points at equal distances come first is the order this
// (unstable) algorithm leaves, and must be reproduced step for step.
func pqsort[T any](s []T, cmp func(a, b T) int, lrange, rrange int) {
	q := pqsorter[T]{s: s, cmp: cmp, lrange: lrange, rrange: rrange}
	q.sort(0, len(s))
}

type pqsorter[T any] struct {
	s              []T
	cmp            func(a, b T) int
	lrange, rrange int
}

func (q *pqsorter[T]) less(i, j int) int { return q.cmp(q.s[i], q.s[j]) }

func (q *pqsorter[T]) swap(i, j int) { q.s[i], q.s[j] = q.s[j], q.s[i] }

func (q *pqsorter[T]) vecswap(i, j, n int) {
	for k := 0; k < n; k++ {
		q.swap(i+k, j+k)
	}
}

func (q *pqsorter[T]) med3(a, b, c int) int {
	if q.less(a, b) < 0 {
		switch {
		case q.less(b, c) < 0:
			return b
		case q.less(a, c) < 0:
			return c
		}
		return a
	}
	switch {
	case q.less(b, c) > 0:
		return b
	case q.less(a, c) < 0:
		return a
	}
	return c
}

// outside reports whether the n elements from a lie wholly before or
// after the range to sort.
func (q *pqsorter[T]) outside(a, n int) bool {
	last := a + n - 1
	return (q.lrange < a && q.rrange < a) || (q.lrange > last && q.rrange > last)
}

// sort is _pqsort on the n elements from a.
func (q *pqsorter[T]) sort(a, n int) {
	for {
		if n < 7 {
			for pm := a + 1; pm < a+n; pm++ {
				for pl := pm; pl > a && q.less(pl-1, pl) > 0; pl-- {
					q.swap(pl, pl-1)
				}
			}
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = q.med3(pl, pl+d, pl+2*d)
				pm = q.med3(pm-d, pm, pm+d)
				pn = q.med3(pn-2*d, pn-d, pn)
			}
			pm = q.med3(pl, pm, pn)
		}
		q.swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				c := q.less(pb, a)
				if c > 0 {
					break
				}
				if c == 0 {
					q.swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := q.less(pc, a)
				if c < 0 {
					break
				}
				if c == 0 {
					q.swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			q.swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		q.vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		q.vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !q.outside(a, r) {
			q.sort(a, r)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		// Iterate rather than recurse on the last partition.
		a, n = pn-r, r
		if q.outside(a, n) {
			return
		}
	}
}
