package main

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
)

func TestParseLMCacheFlagsDefaults(t *testing.T) {
	o, err := parseLMCacheFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.chunk != 16<<20 || o.chunks != 32 || o.conns != 8 || o.maxMemory != "4gb" {
		t.Errorf("defaults = chunk %d, chunks %d, conns %d, maxmemory %s; want 16 MiB, 32, 8, 4gb",
			o.chunk, o.chunks, o.conns, o.maxMemory)
	}
}

func TestParseLMCacheFlagsRefusesAPrefixThatWouldBeEvicted(t *testing.T) {
	_, err := parseLMCacheFlags([]string{"--chunks", "200", "--maxmemory", "1gb"})
	if err == nil || !strings.Contains(err.Error(), "maxmemory") {
		t.Errorf("err = %v, want one about --maxmemory", err)
	}
}

func TestLMCacheKeysLookLikeLMCaches(t *testing.T) {
	keys := lmcacheKeys(33)
	re := regexp.MustCompile(`^model@1@0@[0-9a-f]{64}@bfloat16$`)
	seen := map[string]bool{}
	for _, k := range keys {
		if !re.MatchString(k) {
			t.Errorf("key %q does not look like model@1@0@<hash hex>@bfloat16", k)
		}
		seen[k] = true
	}
	if len(seen) != len(keys) {
		t.Errorf("%d distinct keys of %d", len(seen), len(keys))
	}
	if again := lmcacheKeys(2); again[0] != keys[0] || again[1] != keys[1] {
		t.Errorf("keys are not a deterministic prefix chain")
	}
}

func TestLMCacheMetadataIs28BytesStartingWithTheChunkSize(t *testing.T) {
	meta := lmcacheMetadata(16 << 20)
	if len(meta) != 28 {
		t.Fatalf("metadata is %d bytes, want 28", len(meta))
	}
	if got := binary.LittleEndian.Uint32(meta); got != 16<<20 {
		t.Errorf("first field = %d, want the chunk size", got)
	}
}
