package grouping

import (
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct{ key, group string }{
		{"llama@1@0@abc123@bfloat16kv_bytes", "llama@1@0@abc123@bfloat16"},
		{"llama@1@0@abc123@bfloat16metadata", "llama@1@0@abc123@bfloat16"},
		{"llama@1@0@abc123@bfloat16@7kv_bytes", "llama@1@0@abc123@bfloat16@7"},
		{"x:kv_bytes", "x"},
		{"x:metadata", "x"},
		{"{tag}x:kv_bytes", "{tag}x"},
		{"plain-key", "plain-key"},
		{"kv_bytes", ""},
		{"metadata_not_suffix", "metadata_not_suffix"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(Of([]byte(tt.key))); got != tt.group {
			t.Errorf("Of(%q) = %q, want %q", tt.key, got, tt.group)
		}
		if got := Name(tt.key); got != tt.group {
			t.Errorf("Name(%q) = %q, want %q", tt.key, got, tt.group)
		}
	}
}

func TestMembersAreExactlyTheKeysOfTheGroup(t *testing.T) {
	for _, group := range []string{"x", "x:", "a@b@c", "", "kv_bytes"} {
		for _, k := range Members([]byte(group)) {
			if g := string(Of(k)); g != group {
				t.Errorf("Members(%q) lists %q whose group is %q", group, k, g)
			}
		}
	}
	if got := len(Members([]byte("x"))); got != 1+len(suffixes) {
		t.Errorf("Members(%q) has %d keys, want %d", "x", got, 1+len(suffixes))
	}
}

func TestDataAndMetadataKeys(t *testing.T) {
	tests := []struct {
		key        string
		data, meta bool
	}{
		{"m@1@0@h@bfloat16kv_bytes", true, false},
		{"m@1@0@h@bfloat16:kv_bytes", true, false},
		{"m@1@0@h@bfloat16metadata", false, true},
		{"m@1@0@h@bfloat16:metadata", false, true},
		{"m@1@0@h@bfloat16", false, false},
		{"metadata_not_suffix", false, false},
	}
	for _, tt := range tests {
		if got := IsData(tt.key); got != tt.data {
			t.Errorf("IsData(%q) = %v, want %v", tt.key, got, tt.data)
		}
		if got := IsMetadata(tt.key); got != tt.meta {
			t.Errorf("IsMetadata(%q) = %v, want %v", tt.key, got, tt.meta)
		}
	}
}

func TestIsChunkAcceptsOnlyLMCacheChunkNames(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"llama@1@0@abc123@bfloat16", true},
		{"llama@8@3@abc123@float16@12", true}, // layer-wise
		{"org/model-7b@2@1@ff@half", true},
		{"my@model@1@0@ff@half", true}, // '@' inside the model
		{"llama@1@-1@ff@half", true},   // negative worker id
		{"user:1:", false},
		{"blob", false},
		{"", false},
		{"a@b@c@d@e", false},           // world size and worker not numbers
		{"llama@1@0@@bfloat16", false}, // empty hash
		{"@1@0@ff@half", false},        // empty model
		{"llama@1@0@ff@bf-16", false},  // dtype not a word
	}
	for _, tt := range tests {
		if got := IsChunk(tt.name); got != tt.want {
			t.Errorf("IsChunk(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// rules pins, for each grouping Version, what Of makes of a fixed set of
// keys. A change to the rule fails this test until Version is bumped and a
// row added: the disk tier then treats stores written under the old rule as
// another format instead of reading their records as corrupt.
var rules = map[int]string{
	1: `"akv_bytes"->"a" "ametadata"->"a" "a:kv_bytes"->"a" "a:metadata"->"a" "a::kv_bytes"->"a:" "a_kv_bytes"->"a_" "a-metadata"->"a-" "a.kv_bytes"->"a." "a/kv_bytes"->"a/" "akv-bytes"->"akv-bytes" "aKV_BYTES"->"aKV_BYTES" "ameta"->"ameta" "a@1@0@h@bf16@3kv_bytes"->"a@1@0@h@bf16@3" "a"->"a" ""->"" "kv_bytes"->"" ":metadata"->"" "metadatakv_bytes"->"metadata" "kv_bytesmetadata"->"kv_bytes" "a:kv_bytes:metadata"->"a:kv_bytes" "a kv_bytes"->"a " "a\x00metadata"->"a\x00" "a:data"->"a:data" "a:meta"->"a:meta" "a:kv"->"a:kv" "a:bytes"->"a:bytes"`,
}

func TestVersionPinsTheRule(t *testing.T) {
	keys := []string{"akv_bytes", "ametadata", "a:kv_bytes", "a:metadata", "a::kv_bytes",
		"a_kv_bytes", "a-metadata", "a.kv_bytes", "a/kv_bytes", "akv-bytes", "aKV_BYTES",
		"ameta", "a@1@0@h@bf16@3kv_bytes", "a", "", "kv_bytes", ":metadata",
		"metadatakv_bytes", "kv_bytesmetadata", "a:kv_bytes:metadata", "a kv_bytes",
		"a\x00metadata", "a:data", "a:meta", "a:kv", "a:bytes"}
	got := ""
	for i, k := range keys {
		if i > 0 {
			got += " "
		}
		got += fmt.Sprintf("%q->%q", k, Of([]byte(k)))
	}
	want, ok := rules[Version]
	if !ok {
		t.Fatalf("no pinned rule for Version %d; add:\n%d: `%s`,", Version, Version, got)
	}
	if got != want {
		t.Fatalf("the grouping rule changed without a new Version (the disk tier would read every "+
			"stored record as corrupt): bump Version and pin the new rule.\ngot  %s\nwant %s", got, want)
	}
}

func TestChunkFields(t *testing.T) {
	for _, tc := range []struct{ name, model, hash string }{
		{"llama@1@0@abc123@bfloat16", "llama", "abc123"},
		{"org@model@4@2@-77@half@12", "org@model", "-77@12"},
	} {
		m, h, ok := ChunkFields(tc.name)
		if !ok || m != tc.model || h != tc.hash {
			t.Errorf("ChunkFields(%q) = %q, %q, %v", tc.name, m, h, ok)
		}
	}
	if _, _, ok := ChunkFields("user:1"); ok {
		t.Error("ChunkFields accepted user:1")
	}
}
