package disktier

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kvserver/kvserver/grouping"
)

// formatChunk is an LMCache chunk: its two keys share a group, so each
// record's header holds the group length grouping.Of gives.
var formatChunk = []Entry{
	{Key: []byte("llama@1@0@ab12@bfloat16kv_bytes"), Value: bf16KV(7, 4096)},
	{Key: []byte("llama@1@0@ab12@bfloat16metadata"), Value: randomBytes(8, 28)},
}

// rawFormatKey reads (and, when set is not nil, first replaces) the format
// key of the closed store in dir, through Pebble directly.
func rawFormatKey(t *testing.T, dir string, set []byte) []byte {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	db, err := openPebble(dir, pebbleOptions(Options{Dir: dir}, log, &health{log: log}))
	if err != nil {
		t.Fatalf("open pebble: %v", err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Fatalf("close pebble: %v", err)
		}
	}()
	if set != nil {
		if err := db.Set(formatKey, set, pebble.NoSync); err != nil {
			t.Fatalf("set format key: %v", err)
		}
		if err := db.Flush(); err != nil { // the store runs without a WAL
			t.Fatalf("flush format key: %v", err)
		}
	}
	v, closer, err := db.Get(formatKey)
	if err != nil {
		t.Fatalf("get format key: %v", err)
	}
	defer closer.Close()
	return bytes.Clone(v)
}

// writeChunkStore creates a store in dir holding formatChunk, and closes it.
func writeChunkStore(t *testing.T, dir string) {
	t.Helper()
	s, err := Open(ctx, Options{Dir: dir, MaxDisk: -1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.PutGroup(ctx, 0, formatChunk); err != nil {
		t.Fatalf("PutGroup: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// wantChunkIntact opens the store in dir and checks that formatChunk reads
// back whole and that nothing was counted corrupt.
func wantChunkIntact(t *testing.T, dir string) {
	t.Helper()
	s := openTest(t, Options{Dir: dir, MoveAsideDamaged: true})
	for _, e := range formatChunk {
		got, _, err := s.Get(ctx, 0, e.Key)
		if err != nil || !bytes.Equal(got, e.Value) {
			t.Fatalf("Get(%q) = %d bytes, %v; want the %d bytes written", e.Key, len(got), err, len(e.Value))
		}
	}
	if c := s.Stats().Corrupt; c != 0 {
		t.Fatalf("Stats.Corrupt = %d, want 0", c)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestGroupingVersionIsPartOfTheDiskFormat: each record stores its group's
// length, so a store written under another grouping rule is a store of
// another format. Open refuses it with ErrFormat, as it refuses any unknown
// format, and leaves it as it is (not damage: MoveAsideDamaged does not move
// it, no record is read, deleted or counted corrupt); put back under the
// right version, every record reads whole.
func TestGroupingVersionIsPartOfTheDiskFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	writeChunkStore(t, dir)
	if got, want := rawFormatKey(t, dir, nil), []byte{storeFormat, grouping.Version}; !bytes.Equal(got, want) {
		t.Fatalf("a new store's format key holds %x, want %x (store format, grouping version)", got, want)
	}

	other := byte(grouping.Version + 1)
	rawFormatKey(t, dir, []byte{storeFormat, other})
	s, err := Open(ctx, Options{Dir: dir, MaxDisk: -1, MoveAsideDamaged: true})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open accepted a store written under another grouping version")
	}
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("Open = %v, want ErrFormat", err)
	}
	if isDamage(err) {
		t.Fatalf("a grouping version mismatch reads as damage: %v", err)
	}
	if aside, _ := filepath.Glob(dir + ".damaged-*"); len(aside) != 0 {
		t.Fatalf("the store was moved aside: %v", aside)
	}
	if got := rawFormatKey(t, dir, nil); !bytes.Equal(got, []byte{storeFormat, other}) {
		t.Fatalf("the refused store's format key was changed to %x", got)
	}

	rawFormatKey(t, dir, []byte{storeFormat, grouping.Version})
	wantChunkIntact(t, dir)
}

// TestStoreWithoutGroupingVersionOpensAsVersion1: stores written before the
// grouping version was recorded hold the store format byte alone (format
// 1); they open as grouping version 1 with every record intact, and their
// format key becomes this build's (format 2, grouping version 1).
func TestStoreWithoutGroupingVersionOpensAsVersion1(t *testing.T) {
	if grouping.Version != legacyGroupingVersion {
		t.Skipf("grouping version %d: legacy stores (rule 1) are another format now", grouping.Version)
	}
	dir := filepath.Join(t.TempDir(), "store")
	writeChunkStore(t, dir)
	rawFormatKey(t, dir, []byte{legacyStoreFormat})
	wantChunkIntact(t, dir)
	if got := rawFormatKey(t, dir, nil); !bytes.Equal(got, formatValue()) {
		t.Fatalf("format key of a legacy store is %x after Open, want %x", got, formatValue())
	}
}

// TestFormat1StoresOpenAndAreMarkedFormat2: a store written before XXH3
// piece hashes (format 1, with the grouping version) opens with every
// record intact, and its format key says format 2 from then on, so that a
// build that knows only format 1 refuses it rather than deleting its
// XXH3-hashed records as damaged. A format 2 key is left as it is.
func TestFormat1StoresOpenAndAreMarkedFormat2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	writeChunkStore(t, dir)
	if got := rawFormatKey(t, dir, nil); !bytes.Equal(got, []byte{2, grouping.Version}) {
		t.Fatalf("a new store's format key holds %x, want format 2", got)
	}
	rawFormatKey(t, dir, []byte{legacyStoreFormat, grouping.Version})
	wantChunkIntact(t, dir)
	if got := rawFormatKey(t, dir, nil); !bytes.Equal(got, []byte{2, grouping.Version}) {
		t.Fatalf("format key of a format 1 store is %x after Open, want %x", got, []byte{2, grouping.Version})
	}
	wantChunkIntact(t, dir)
}

// TestUnknownFormatKeysAreRefused: any other format key value is ErrFormat.
func TestUnknownFormatKeysAreRefused(t *testing.T) {
	for _, v := range [][]byte{{storeFormat + 1}, {storeFormat + 1, grouping.Version}, {storeFormat, grouping.Version, 0}, {}} {
		dir := filepath.Join(t.TempDir(), "store")
		writeChunkStore(t, dir)
		rawFormatKey(t, dir, v)
		s, err := Open(ctx, Options{Dir: dir, MaxDisk: -1, MoveAsideDamaged: true})
		if err == nil {
			_ = s.Close()
			t.Fatalf("format key %x: Open accepted the store", v)
		}
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("format key %x: Open = %v, want ErrFormat", v, err)
		}
	}
}
