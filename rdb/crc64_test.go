package rdb

import "testing"

func TestCRC64MatchesRedis(t *testing.T) {
	// crc64.c's own test vector.
	if got := crc64Jones(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
}
