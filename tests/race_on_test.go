//go:build race

package tests

// raceEnabled reports that the tests were built with -race.
const raceEnabled = true
