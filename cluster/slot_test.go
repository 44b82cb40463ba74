package cluster

import "testing"

// TestCRC16MatchesRedisSpec checks the check value the Redis Cluster
// specification gives for its CRC16 (XMODEM): "123456789" -> 0x31C3.
func TestCRC16MatchesRedisSpec(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31c3 {
		t.Fatalf("CRC16(123456789) = %#04x, want 0x31c3", got)
	}
	if got := CRC16(nil); got != 0 {
		t.Fatalf("CRC16(empty) = %#04x, want 0", got)
	}
}

// TestKeySlotMatchesRedis pins slots that redis-server 7.0's CLUSTER
// KEYSLOT returns, hash-tag rules included.
func TestKeySlotMatchesRedis(t *testing.T) {
	cases := []struct {
		key  string
		slot int
	}{
		{"123456789", 12739},
		{"user1000", 3443},
		{"{user1000}.following", 3443}, // only the tag is hashed
		{"{user1000}.followers", 3443},
		{"foo{}{bar}", 8363},    // empty first tag: the whole key
		{"foo{{bar}}zap", 4015}, // tag is "{bar"
		{"foo{bar}{zap}", 5061}, // first tag only: "bar"
		{"{}", 15257},
		{"{", 4092},
		{"}{a}", 15495}, // a '}' before the first '{' does not count
		{"abc{", 3048},  // unclosed tag: the whole key
		{"", 0},
		{"a", 15495},
		{"{a}", 15495},
		{"foo", 12182},
		{"mymodel@1@0@deadbeef@bf16kv_bytes", 13012},
	}
	for _, tc := range cases {
		if got := KeySlot([]byte(tc.key)); got != tc.slot {
			t.Errorf("KeySlot(%q) = %d, want %d", tc.key, got, tc.slot)
		}
	}
}

func BenchmarkKeySlot(b *testing.B) {
	key := []byte("vllm@8@0@5f2b9c0d1e4a7b3c9d8e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5@bfloat16kv_bytes")
	for b.Loop() {
		KeySlot(key)
	}
}
