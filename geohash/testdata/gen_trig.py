#!/usr/bin/env python3
"""Writes trig.txt: arguments of the kind package geohash feeds to sin, cos
and asin, each with its correctly rounded result (mpmath at 300 bits) and
glibc's (Python's math module calls the C library's libm), as hex float64
bits: "fn x correctly_rounded glibc". Run from this directory:
    python3 gen_trig.py > trig.txt
"""
import math, random, struct
import mpmath

mpmath.mp.prec = 300
random.seed(2026)

def h(f):
    return struct.pack('>d', f).hex()

fns = {'sin': (math.sin, mpmath.sin), 'cos': (math.cos, mpmath.cos), 'asin': (math.asin, mpmath.asin)}
for i in range(1500):
    for name, lo, hi in (('sin', -3.3, 3.3), ('cos', -4.7, 4.7), ('asin', 0.0, 1.0)):
        x = random.uniform(lo, hi)
        if name == 'asin' and i % 4 == 0:
            x = 1 - random.random() * 1e-6
        libm, ref = fns[name]
        print(name, h(x), h(float(ref(mpmath.mpf(x)))), h(libm(x)))
