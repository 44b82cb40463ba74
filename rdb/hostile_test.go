package rdb

import (
	"errors"
	"runtime"
	"testing"
)

// TestRestoreOfLyingLengthsAllocatesLittle restores payloads of a few
// bytes whose LZF string claims 4 GiB uncompressed. Each must fail with
// ErrData having allocated about as much as the payload, not what it
// claims (RESTORE is reachable by any client with @dangerous; it
// allocated the 4 GiB).
func TestRestoreOfLyingLengthsAllocatesLittle(t *testing.T) {
	lzf4G := []byte{typeString, 0xC3, 0x02, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0x00, 'a'}
	for name, body := range map[string][]byte{
		"lzf string of 4 GiB":                lzf4G,
		"lzf string of 4 GiB, max long form": {typeString, 0xC3, 0x02, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 'a'},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Restore(AppendFooter(append([]byte(nil), body...)), testLimits)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrData) {
			t.Errorf("%s: err %v, want ErrData", name, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: allocated %d bytes restoring a %d-byte payload", name, got, len(body))
		}
	}
}
