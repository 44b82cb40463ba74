package engine

import "testing"

// TestIsChunkKeyMatchesOnlyLMCacheChunkKeys: group and pair rules apply to
// LMCache chunks only, never to ordinary keys that end in a chunk suffix.
func TestIsChunkKeyMatchesOnlyLMCacheChunkKeys(t *testing.T) {
	cases := []struct {
		key  string
		want bool
	}{
		{"llama@1@0@abc123@bfloat16kv_bytes", true},
		{"llama@1@0@abc123@bfloat16metadata", true},
		{"llama@1@0@abc123@bfloat16:kv_bytes", true},
		{"llama@1@0@abc123@bfloat16:metadata", true},
		{"llama@8@3@abc123@float16@12kv_bytes", true}, // layerwise
		{"org/model-7b@2@1@ff@half:metadata", true},
		{"llama@1@0@abc123@bfloat16", false}, // no suffix
		{"user:1:metadata", false},
		{"blobkv_bytes", false},
		{"metadata", false},
		{"a@b@c@d@ekv_bytes", false},           // world size and worker not numbers
		{"llama@1@0@@bfloat16kv_bytes", false}, // empty hash
		{"llama@1@0@abc@12kv_bytes", false},    // no dtype
		{"x@y@llama@1@0@abc@bf16metadata", false},
	}
	for _, tc := range cases {
		if got := isChunkKey(tc.key); got != tc.want {
			t.Errorf("isChunkKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
