// Package geohash is the arithmetic of Redis's geo sets (src/geohash.c,
// src/geohash_helper.c and the helpers of src/geo.c), ported function for
// function so that every score, cell, search area, distance and geohash
// string is the one redis-server 7.0 computes.
//
// A position is stored as a sorted-set score: the 26-bit latitude and
// 26-bit longitude cell numbers, interleaved (longitude bits in the odd
// positions), a 52-bit integer that a float64 holds exactly. Latitudes are
// limited to the Web Mercator range (LatMin..LatMax), so the poles cannot
// be stored. A search covers the circle or box by the cell holding its
// centre and that cell's eight neighbours, at a precision chosen from the
// radius, and then filters the candidates by their distance
// (haversine on a sphere of radius EarthRadius).
//
// Floating point follows the C code operation for operation: no fused
// multiply-adds (explicit float64 conversions keep Go from contracting),
// the same constants, the same order. Redis takes sin, cos and asin from
// glibc, which rounds them almost always correctly; package math is off
// by one ULP in a third of cases, so crmath.go evaluates them in
// double-double and rounds once. They agree with glibc on 4494 of the 4500
// arguments of testdata/trig.txt; in the rest glibc is the one that is
// not correctly rounded, and a distance may then differ in its last bit.
// Replies print distances with four decimals, where that never shows;
// GEOSEARCHSTORE STOREDIST stores the full double, where it rarely can.
//
// The package knows nothing of keys, RESP or sorted sets; the GEO commands
// live in package commands.
package geohash
