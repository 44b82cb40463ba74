package engine

import "testing"

// TestOnlyLMCacheChunkKeysAreChunks: a damaged key takes its group with it
// only when the group is an LMCache chunk, never for ordinary keys that end
// in a chunk suffix.
func TestOnlyLMCacheChunkKeysAreChunks(t *testing.T) {
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
		{"user:1:metadata", false},
		{"blobkv_bytes", false},
		{"metadata", false},
		{"a@b@c@d@ekv_bytes", false},           // world size and worker not numbers
		{"llama@1@0@@bfloat16kv_bytes", false}, // empty hash
	}
	for _, tc := range cases {
		g := &group{name: groupName(tc.key), items: []*item{{key: tc.key}}}
		if got := g.isChunk(); got != tc.want {
			t.Errorf("group of %q: isChunk %v, want %v", tc.key, got, tc.want)
		}
	}
}
