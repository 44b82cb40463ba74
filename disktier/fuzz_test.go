package disktier

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// FuzzDecodeRecord feeds arbitrary header values and payloads to the decoding
// that Get and Iterate run on what they read from disk. It must never panic
// or allocate beyond the limit it is given, every failure must be an
// errBadRecord (which Get turns into ErrCorrupt), and whatever it accepts
// must carry a matching checksum. Seeds (valid records of every codec, and a
// few damaged ones) are in testdata/fuzz/FuzzDecodeRecord; regenerate them
// with LSM_WRITE_FUZZ_SEEDS=1 go test ./disktier/ -run TestWriteFuzzSeeds.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte("k"), []byte{}, []byte{})
	f.Add([]byte("k"), make([]byte, headerLen), []byte{})
	c := newCodecs(1 << 20)
	defer c.close()
	get := func(n int) *[]byte { b := make([]byte, n); return &b }
	put := func(*[]byte) {}
	f.Fuzz(func(t *testing.T, key, hval, payload []byte) {
		h, err := decodeHeader(hval, 1<<20)
		if err != nil {
			if !errors.Is(err, errBadRecord) {
				t.Fatalf("decodeHeader error %v is not errBadRecord", err)
			}
			return
		}
		if h.inline() {
			payload = hval[headerLen:]
		}
		v, err := decodeRecordPayload(c, &h, hval[:headerLen], key, payload, get, put)
		if err != nil {
			if !errors.Is(err, errBadRecord) {
				t.Fatalf("decode error %v is not errBadRecord", err)
			}
			return
		}
		if uint64(len(v)) != h.rawLen || recordChecksum(hval, key, v) != h.checksum {
			t.Fatalf("accepted a record whose value does not match its header")
		}
	})
}

// TestWriteFuzzSeeds regenerates the seed corpus from records written by a
// real Store. It only runs when LSM_WRITE_FUZZ_SEEDS is set.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("LSM_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set LSM_WRITE_FUZZ_SEEDS=1 to regenerate testdata/fuzz/FuzzDecodeRecord")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeRecord")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, key, hval, payload []byte) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "go test fuzz v1\n[]byte(%q)\n[]byte(%q)\n[]byte(%q)\n", key, hval, payload)
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, codec := range []Compression{CompressionNone, CompressionS2, CompressionZstd} {
		s := openTest(t, Options{Compression: codec})
		records := map[string][]byte{
			"inline":  []byte("28 bytes of LMCache metadata"),
			"kv":      bf16KV(1, 3000),
			"text":    bytes.Repeat([]byte("kv cache "), 200),
			"odd":     bf16KV(2, 1001),
			"expires": []byte("v"),
		}
		for name, v := range records {
			key := []byte("chunk@" + name + "kv_bytes")
			meta := RecordMeta{Shuffle: name == "kv" || name == "odd"}
			if name == "expires" {
				meta.ExpireAt = 1_700_000_000_000
			}
			if err := s.Put(ctx, 1, key, v, meta); err != nil {
				t.Fatal(err)
			}
			hval := rawGet(t, s, encodeKey(nil, prefixHeader, 1, key))
			payload := rawGet(t, s, encodeKey(nil, prefixValue, 1, key))
			write(fmt.Sprintf("%v-%s", codec, name), key, hval, payload)
			if len(payload) > 10 {
				bad := bytes.Clone(payload)
				bad[len(bad)/2] ^= 1
				write(fmt.Sprintf("%v-%s-flipped", codec, name), key, hval, bad)
			}
		}
	}
}

func rawGet(t *testing.T, s *Store, k []byte) []byte {
	t.Helper()
	v, closer, err := s.pebbleDB().Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	return bytes.Clone(v)
}
