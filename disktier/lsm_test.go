package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kvserver/kvserver/grouping"
)

var ctx = context.Background()

func mustPut(t *testing.T, s *Store, db int, key string, value []byte, meta RecordMeta) {
	t.Helper()
	if err := s.Put(ctx, db, []byte(key), value, meta); err != nil {
		t.Fatalf("Put(%d, %q): %v", db, key, err)
	}
}

func mustGet(t *testing.T, s *Store, db int, key string) ([]byte, RecordMeta) {
	t.Helper()
	v, meta, err := s.Get(ctx, db, []byte(key))
	if err != nil {
		t.Fatalf("Get(%d, %q): %v", db, key, err)
	}
	return v, meta
}

func wantNotFound(t *testing.T, s *Store, db int, key string) {
	t.Helper()
	if _, _, err := s.Get(ctx, db, []byte(key)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(%d, %q) = %v, want ErrNotFound", db, key, err)
	}
}

func TestRoundTripSmallAndLargeValuesInSeveralDatabases(t *testing.T) {
	values := map[string][]byte{
		"empty":    {},
		"one":      {7},
		"metadata": randomBytes(1, 28),
		"inline":   bf16KV(2, inlineMax),
		"small":    bf16KV(3, 5000),
		"random":   randomBytes(4, 4<<20),
		"kv":       bf16KV(5, 4<<20),
		"odd":      bf16KV(6, 4<<20+1),
	}
	for _, codec := range []Compression{CompressionNone, CompressionS2, CompressionZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			s := openTest(t, Options{Compression: codec})
			for _, db := range []int{0, 1, 15} {
				for name, v := range values {
					mustPut(t, s, db, fmt.Sprintf("%s-%d", name, db), v, RecordMeta{Shuffle: name != "random"})
				}
			}
			for _, db := range []int{0, 1, 15} {
				for name, v := range values {
					got, meta := mustGet(t, s, db, fmt.Sprintf("%s-%d", name, db))
					if !bytes.Equal(got, v) {
						t.Fatalf("db %d %s: value differs (%d bytes, want %d)", db, name, len(got), len(v))
					}
					if meta.Size != int64(len(v)) {
						t.Errorf("db %d %s: meta.Size = %d, want %d", db, name, meta.Size, len(v))
					}
				}
				// Keys are per database.
				wantNotFound(t, s, db, fmt.Sprintf("kv-%d", db+100))
			}
			st := s.Stats()
			if want := int64(3 * len(values)); st.Keys != want || st.KeysByDB[15] != int64(len(values)) {
				t.Errorf("Stats: Keys=%d KeysByDB=%v, want %d total and %d in db 15", st.Keys, st.KeysByDB, want, len(values))
			}
			if st.Corrupt != 0 {
				t.Errorf("Stats.Corrupt = %d", st.Corrupt)
			}
		})
	}
}

func TestPutReplacesAndKeepsAccountingExact(t *testing.T) {
	s := openTest(t, Options{Compression: CompressionS2})
	mustPut(t, s, 0, "k", bf16KV(1, 1<<20), RecordMeta{})
	mustPut(t, s, 0, "k", []byte("small now"), RecordMeta{}) // non-inline -> inline
	got, meta := mustGet(t, s, 0, "k")
	if string(got) != "small now" {
		t.Fatalf("Get = %q", got)
	}
	if st := s.Stats(); st.Keys != 1 || st.Bytes != meta.StoredSize || st.RawBytes != 9 {
		t.Fatalf("Stats = %+v, want 1 key of %d bytes", st, meta.StoredSize)
	}
	// The replaced payload key is gone, not orphaned.
	if _, closer, err := s.pebbleDB().Get(encodeKey(nil, prefixValue, 0, []byte("k"))); err == nil {
		closer.Close()
		t.Fatal("payload key of the replaced record still present")
	}
	if ok, err := s.Delete(ctx, 0, []byte("k")); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if st := s.Stats(); st.Keys != 0 || st.Bytes != 0 || st.RawBytes != 0 || s.DiskUsage() != 0 {
		t.Fatalf("after Delete: Stats = %+v", st)
	}
	if ok, err := s.Delete(ctx, 0, []byte("k")); ok || err != nil {
		t.Fatalf("second Delete = %v, %v", ok, err)
	}
}

func TestPutGroupWritesAllOrNothingAndDeleteGroupRemovesAll(t *testing.T) {
	s := openTest(t, Options{})
	prefix := "llama@1@0@00ff@bfloat16"
	group := []Entry{
		{Key: []byte(prefix + "kv_bytes"), Value: bf16KV(1, 1<<20), Meta: RecordMeta{Shuffle: true}},
		{Key: []byte(prefix + "metadata"), Value: randomBytes(2, 28)},
	}
	if err := s.PutGroup(ctx, 3, group); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, 3, "other:kv_bytes", []byte("stays"), RecordMeta{})
	for _, e := range group {
		if got, _ := mustGet(t, s, 3, string(e.Key)); !bytes.Equal(got, e.Value) {
			t.Fatalf("%s differs", e.Key)
		}
	}

	// A batch that mixes groups is refused whole.
	mixed := []Entry{{Key: []byte("a:kv_bytes"), Value: []byte("1")}, {Key: []byte("b:metadata"), Value: []byte("2")}}
	if err := s.PutGroup(ctx, 3, mixed); err == nil {
		t.Fatal("PutGroup accepted keys of two groups")
	}
	wantNotFound(t, s, 3, "a:kv_bytes")

	n, err := s.DeleteGroup(ctx, 3, []byte(prefix))
	if err != nil || n != 2 {
		t.Fatalf("DeleteGroup = %d, %v; want 2", n, err)
	}
	for _, e := range group {
		wantNotFound(t, s, 3, string(e.Key))
	}
	mustGet(t, s, 3, "other:kv_bytes")
	if st := s.Stats(); st.Keys != 1 || st.Deletes != 2 {
		t.Fatalf("Stats: Keys=%d Deletes=%d", st.Keys, st.Deletes)
	}
}

func TestPutGroupOverMaxDiskWritesNothing(t *testing.T) {
	s := openTest(t, Options{MaxDisk: 3 << 20, Compression: CompressionNone})
	mustPut(t, s, 0, "a:kv_bytes", randomBytes(1, 2<<20), RecordMeta{})
	group := []Entry{
		{Key: []byte("b:kv_bytes"), Value: randomBytes(2, 2<<20)},
		{Key: []byte("b:metadata"), Value: []byte("meta")},
	}
	if err := s.PutGroup(ctx, 0, group); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("PutGroup = %v, want ErrDiskFull", err)
	}
	wantNotFound(t, s, 0, "b:kv_bytes")
	wantNotFound(t, s, 0, "b:metadata")
	if st := s.Stats(); st.DiskFull != 1 || st.Keys != 1 {
		t.Fatalf("Stats: DiskFull=%d Keys=%d", st.DiskFull, st.Keys)
	}
	// Evicting makes room once the space of the deleted record comes
	// back: its dead value-log segment counts until it is collected, which
	// a refused write asks for at once.
	if _, err := s.DeleteGroup(ctx, 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.PutGroup(ctx, 0, group)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrReclaiming) || time.Now().After(deadline) {
			t.Fatalf("PutGroup after eviction: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u := s.DiskUsage(); u <= 2<<20 || u > s.MaxDisk() {
		t.Fatalf("DiskUsage = %d, MaxDisk = %d", u, s.MaxDisk())
	}
}

func TestPutGroupsWritesSeveralGroupsInOneBatchOrNone(t *testing.T) {
	s := openTest(t, Options{MaxDisk: 1 << 20})
	mustPut(t, s, 1, "a:kv_bytes", []byte("old value of a"), RecordMeta{})
	writes := []GroupWrite{
		{DB: 1, Entries: []Entry{{Key: []byte("a:kv_bytes"), Value: randomBytes(1, 4096)},
			{Key: []byte("a:metadata"), Value: []byte("meta a"), Fresh: true}}},
		{DB: 2, Entries: []Entry{{Key: []byte("a:kv_bytes"), Value: randomBytes(2, 300), Fresh: true}}},
		{DB: 1, Entries: nil},
		{DB: 1, Entries: []Entry{{Key: []byte("b"), Value: []byte("small"), Meta: RecordMeta{ExpireAt: 1 << 60}, Fresh: true}}},
	}
	if err := s.PutGroups(ctx, writes); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, w := range writes {
		for _, e := range w.Entries {
			got, meta := mustGet(t, s, w.DB, string(e.Key))
			if !bytes.Equal(got, e.Value) || meta.ExpireAt != e.Meta.ExpireAt {
				t.Fatalf("db %d %s differs", w.DB, e.Key)
			}
			want += meta.StoredSize
		}
	}
	if st := s.Stats(); st.Keys != 4 || st.Bytes != want || st.KeysByDB[1] != 3 || st.KeysByDB[2] != 1 {
		t.Fatalf("Stats = %+v, want 4 keys of %d bytes", st, want)
	}

	// A group given twice, a bad group or a write over MaxDisk: nothing of
	// the call is written.
	twice := []GroupWrite{
		{DB: 3, Entries: []Entry{{Key: []byte("c:kv_bytes"), Value: []byte("1")}}},
		{DB: 3, Entries: []Entry{{Key: []byte("c:metadata"), Value: []byte("2")}}},
	}
	if err := s.PutGroups(ctx, twice); err == nil {
		t.Fatal("PutGroups accepted a group twice")
	}
	mixed := []GroupWrite{twice[0], {DB: 3, Entries: []Entry{{Key: []byte("d:kv_bytes"), Value: []byte("1")},
		{Key: []byte("e:metadata"), Value: []byte("2")}}}}
	if err := s.PutGroups(ctx, mixed); err == nil {
		t.Fatal("PutGroups accepted keys of two groups in one group")
	}
	full := []GroupWrite{twice[0], {DB: 4, Entries: []Entry{{Key: []byte("big"), Value: randomBytes(3, 2<<20)}}}}
	if err := s.PutGroups(ctx, full); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("PutGroups over MaxDisk = %v, want ErrDiskFull", err)
	}
	wantNotFound(t, s, 3, "c:kv_bytes")
	wantNotFound(t, s, 4, "big")
	if st := s.Stats(); st.Keys != 4 || st.Bytes != want {
		t.Fatalf("after refused calls: Stats = %+v, want 4 keys of %d bytes", st, want)
	}
}

func TestExpiryIsStoredReturnedAndEnforced(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { return now }
	s := openTest(t, Options{Now: clock})
	exp := now.Add(time.Minute).UnixMilli()
	mustPut(t, s, 0, "ttl", []byte("v"), RecordMeta{ExpireAt: exp})
	mustPut(t, s, 0, "big-ttl", bf16KV(1, 1<<20), RecordMeta{ExpireAt: exp})
	mustPut(t, s, 0, "forever", []byte("v"), RecordMeta{})
	if _, meta := mustGet(t, s, 0, "ttl"); meta.ExpireAt != exp {
		t.Fatalf("ExpireAt = %d, want %d", meta.ExpireAt, exp)
	}
	if meta, err := s.Stat(ctx, 0, []byte("forever")); err != nil || meta.ExpireAt != 0 {
		t.Fatalf("Stat(forever) = %+v, %v", meta, err)
	}

	now = now.Add(2 * time.Minute)
	wantNotFound(t, s, 0, "ttl")
	if _, err := s.Stat(ctx, 0, []byte("big-ttl")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat of expired record = %v", err)
	}
	if st := s.Stats(); st.Expired != 2 || st.Keys != 1 {
		t.Fatalf("Stats: Expired=%d Keys=%d, want 2 and 1", st.Expired, st.Keys)
	}
}

type listed struct {
	db   int
	key  string
	meta RecordMeta
	size int64
}

func listAll(t *testing.T, s *Store) []listed {
	t.Helper()
	var out []listed
	err := s.Iterate(ctx, func(db int, key []byte, meta RecordMeta, size int64) error {
		out = append(out, listed{db, string(key), meta, size})
		return nil
	})
	if err != nil {
		t.Fatalf("Iterate: %v", err)
	}
	return out
}

func TestReopenKeepsEverythingAndIterateListsIt(t *testing.T) {
	for _, mode := range []Options{{}, {WAL: true}, {Sync: true}} {
		t.Run(fmt.Sprintf("wal=%v/sync=%v", mode.WAL, mode.Sync), func(t *testing.T) {
			opts := mode
			opts.Dir, opts.MaxDisk = t.TempDir(), -1
			s, err := Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			exp := time.Now().Add(time.Hour).UnixMilli()
			want := map[string][]byte{}
			for db := range 3 {
				for i := range 5 {
					k := fmt.Sprintf("%d@chunk%d", db, i)
					v := bf16KV(uint64(db*10+i), 1000+i*300_000)
					want[k] = v
					mustPut(t, s, db, k, v, RecordMeta{ExpireAt: exp, Shuffle: i%2 == 0})
				}
			}
			before := s.Stats()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, 0, []byte("x"), nil, RecordMeta{}); !errors.Is(err, ErrClosed) {
				t.Fatalf("Put after Close = %v", err)
			}

			s = openTest(t, opts)
			after := s.Stats()
			if after.Keys != before.Keys || after.Bytes != before.Bytes || after.RawBytes != before.RawBytes {
				t.Fatalf("accounting after reopen %d/%d/%d, before %d/%d/%d",
					after.Keys, after.Bytes, after.RawBytes, before.Keys, before.Bytes, before.RawBytes)
			}
			got := listAll(t, s)
			if len(got) != len(want) {
				t.Fatalf("Iterate listed %d records, want %d", len(got), len(want))
			}
			var stored int64
			for _, r := range got {
				v, ok := want[r.key]
				if !ok || r.db != int(r.key[0]-'0') {
					t.Fatalf("unexpected record db %d %q", r.db, r.key)
				}
				if r.size != int64(len(v)) || r.meta.Size != int64(len(v)) || r.meta.ExpireAt != exp {
					t.Errorf("%q: size %d meta %+v, want %d bytes expiring %d", r.key, r.size, r.meta, len(v), exp)
				}
				stored += r.meta.StoredSize
				val, meta := mustGet(t, s, r.db, r.key)
				if !bytes.Equal(val, v) || meta != r.meta {
					t.Fatalf("%q: Get differs from what was written or listed (%+v vs %+v)", r.key, meta, r.meta)
				}
			}
			if stored != after.Bytes {
				t.Errorf("listed StoredSize sums to %d, Stats.Bytes = %d", stored, after.Bytes)
			}
		})
	}
}

func TestIterateDeletesExpiredRecordsAndStopsOnError(t *testing.T) {
	now := time.Now()
	s := openTest(t, Options{Now: func() time.Time { return now }})
	mustPut(t, s, 0, "a", []byte("1"), RecordMeta{ExpireAt: now.Add(time.Second).UnixMilli()})
	mustPut(t, s, 0, "b", []byte("2"), RecordMeta{})
	mustPut(t, s, 0, "c", []byte("3"), RecordMeta{})
	now = now.Add(time.Hour)
	got := listAll(t, s)
	if len(got) != 2 || got[0].key != "b" {
		t.Fatalf("Iterate listed %v, want b and c", got)
	}
	if st := s.Stats(); st.Keys != 2 || st.Expired != 1 {
		t.Fatalf("Stats: Keys=%d Expired=%d", st.Keys, st.Expired)
	}
	stop := errors.New("stop")
	calls := 0
	err := s.Iterate(ctx, func(int, []byte, RecordMeta, int64) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Iterate = %v after %d calls", err, calls)
	}
}

func TestCorruptRecordIsDeletedCountedAndNeverReturned(t *testing.T) {
	var logged bytes.Buffer
	s := openTest(t, Options{Compression: CompressionZstd, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	value := bf16KV(1, 1<<20)
	mustPut(t, s, 2, "chunk:kv_bytes", value, RecordMeta{Shuffle: true})
	mustPut(t, s, 2, "chunk:metadata", []byte("28 bytes of metadata......."), RecordMeta{})
	mustPut(t, s, 2, "raw", randomBytes(9, 100_000), RecordMeta{})
	pdb := s.pebbleDB()

	corrupt := func(k []byte, flip int) {
		t.Helper()
		v, closer, err := pdb.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(v)
		closer.Close()
		bad[flip%len(bad)] ^= 0x40
		if err := s.setRaw(k, bad); err != nil {
			t.Fatal(err)
		}
	}
	corrupt(encodeKey(nil, prefixValue, 2, []byte("chunk:kv_bytes")), 5000)       // compressed payload
	corrupt(encodeKey(nil, prefixHeader, 2, []byte("chunk:metadata")), headerLen) // inline payload
	corrupt(encodeKey(nil, prefixValue, 2, []byte("raw")), 77777)                 // uncompressed payload

	for i, k := range []string{"chunk:kv_bytes", "chunk:metadata", "raw"} {
		v, _, err := s.Get(ctx, 2, []byte(k))
		if !errors.Is(err, ErrCorrupt) || v != nil {
			t.Fatalf("Get(%q) = %d bytes, %v; want ErrCorrupt and no bytes", k, len(v), err)
		}
		wantNotFound(t, s, 2, k)
		if st := s.Stats(); st.Corrupt != int64(i+1) {
			t.Fatalf("Stats.Corrupt = %d after %d corrupt reads", st.Corrupt, i+1)
		}
	}
	if st := s.Stats(); st.Keys != 0 || st.Bytes != 0 {
		t.Fatalf("corrupt records still counted: Keys=%d Bytes=%d", st.Keys, st.Bytes)
	}
	if !bytes.Contains(logged.Bytes(), []byte("corrupt record")) {
		t.Fatalf("corruption not logged: %s", logged.String())
	}
}

func TestCorruptHeaderIsDroppedByIterate(t *testing.T) {
	s := openTest(t, Options{})
	mustPut(t, s, 0, "good", []byte("1"), RecordMeta{})
	mustPut(t, s, 0, "bad", bf16KV(1, 10_000), RecordMeta{})
	hkey := encodeKey(nil, prefixHeader, 0, []byte("bad"))
	if err := s.setRaw(hkey, []byte{headerVersion, 99}); err != nil {
		t.Fatal(err)
	}
	got := listAll(t, s)
	if len(got) != 1 || got[0].key != "good" {
		t.Fatalf("Iterate listed %v", got)
	}
	if st := s.Stats(); st.Corrupt != 1 {
		t.Fatalf("Stats.Corrupt = %d", st.Corrupt)
	}
	if _, closer, err := s.pebbleDB().Get(encodeKey(nil, prefixValue, 0, []byte("bad"))); err == nil {
		closer.Close()
		t.Fatal("payload of the corrupt record left behind")
	}
}

func TestIncompressibleValuesAreStoredRaw(t *testing.T) {
	s := openTest(t, Options{Compression: CompressionZstd})
	v := randomBytes(1, 1<<20)
	mustPut(t, s, 0, "r", v, RecordMeta{Shuffle: true})
	_, meta := mustGet(t, s, 0, "r")
	if meta.Codec != CompressionNone || meta.Shuffle || meta.StoredSize > int64(len(v))+200 {
		t.Fatalf("meta = %+v for %d random bytes", meta, len(v))
	}
	mustPut(t, s, 0, "kv", bf16KV(1, 1<<20), RecordMeta{Shuffle: true})
	if _, meta := mustGet(t, s, 0, "kv"); meta.Codec != CompressionZstd || !meta.Shuffle || meta.StoredSize >= 1<<20 {
		t.Fatalf("meta = %+v for bf16 data", meta)
	}
}

func TestFlushDBAndFlushAll(t *testing.T) {
	s := openTest(t, Options{})
	for db := range 3 {
		for i := range 4 {
			mustPut(t, s, db, fmt.Sprintf("k%d", i), bf16KV(uint64(i), 2000*(i+1)), RecordMeta{})
		}
	}
	if err := s.FlushDB(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, 1, "k0")
	mustGet(t, s, 0, "k0")
	mustGet(t, s, 2, "k3")
	if st := s.Stats(); st.Keys != 8 || st.KeysByDB[1] != 0 {
		t.Fatalf("after FlushDB(1): Keys=%d KeysByDB=%v", st.Keys, st.KeysByDB)
	}
	mustPut(t, s, 1, "new", []byte("x"), RecordMeta{})
	if err := s.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s); len(got) != 0 {
		t.Fatalf("after FlushAll Iterate lists %v", got)
	}
	if st := s.Stats(); st.Keys != 0 || st.Bytes != 0 || len(st.KeysByDB) != 0 {
		t.Fatalf("after FlushAll: %+v", st)
	}
}

func TestInvalidArgumentsAreRejected(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.Put(ctx, -1, []byte("k"), nil, RecordMeta{}); err == nil {
		t.Error("negative database accepted")
	}
	if err := s.Put(ctx, 0, []byte("k"), nil, RecordMeta{ExpireAt: -5}); err == nil {
		t.Error("negative expiry accepted")
	}
	dup := []Entry{{Key: []byte("k")}, {Key: []byte("k")}}
	if err := s.PutGroup(ctx, 0, dup); err == nil {
		t.Error("duplicate keys accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.Get(cancelled, 0, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with cancelled context = %v", err)
	}
	if _, err := Open(ctx, Options{}); err == nil {
		t.Error("Open without Dir succeeded")
	}
	if _, err := ParseCompression("lz4"); err == nil {
		t.Error("ParseCompression(lz4) succeeded")
	}
}

func TestConcurrentWritersAndReadersSeeNoCorruption(t *testing.T) {
	s := openTest(t, Options{Compression: CompressionS2})
	values := [][]byte{bf16KV(1, 64<<10), randomBytes(2, 100), bf16KV(3, 200<<10), nil}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				k := []byte(fmt.Sprintf("g%d:kv_bytes", i%3))
				switch (i + w) % 4 {
				case 0, 1:
					if err := s.Put(ctx, 0, k, values[(i+w)%len(values)], RecordMeta{Shuffle: true}); err != nil {
						t.Error(err)
					}
				case 2:
					v, _, err := s.Get(ctx, 0, k)
					if err != nil && !errors.Is(err, ErrNotFound) {
						t.Error(err)
					} else if err == nil && !containsValue(values, v) {
						t.Error("Get returned bytes never written")
					}
				case 3:
					if _, err := s.DeleteGroup(ctx, 0, grouping.Of(k)); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	st := s.Stats()
	if st.Corrupt != 0 {
		t.Fatalf("Stats.Corrupt = %d under concurrency", st.Corrupt)
	}
	var keys, stored int64
	for _, r := range listAll(t, s) {
		keys++
		stored += r.meta.StoredSize
	}
	if keys != st.Keys || stored != st.Bytes {
		t.Fatalf("accounting drifted: Stats %d keys %d bytes, records %d keys %d bytes", st.Keys, st.Bytes, keys, stored)
	}
}

func containsValue(values [][]byte, v []byte) bool {
	for _, w := range values {
		if bytes.Equal(v, w) {
			return true
		}
	}
	return false
}

func TestDeletedSpaceIsReturnedToTheFileSystem(t *testing.T) {
	s := openTest(t, Options{Compression: CompressionNone})
	value := randomBytes(1, 1<<20)
	fill := func(db, n int) {
		t.Helper()
		for i := range n {
			mustPut(t, s, db, fmt.Sprintf("chunk%d:kv_bytes", i), value, RecordMeta{})
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if p := s.Stats().PhysicalBytes; p < int64(n)<<20 {
			t.Fatalf("PhysicalBytes = %d after writing %d MiB", p, n)
		}
	}
	waitPhysicalBelow := func(limit int64) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			p := s.Stats().PhysicalBytes
			if p < limit {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("PhysicalBytes still %d, want < %d (live %d)", p, limit, s.DiskUsage())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	fill(0, 32)
	if err := s.FlushDB(ctx, 0); err != nil {
		t.Fatal(err)
	}
	waitPhysicalBelow(4 << 20)

	// Point deletions (evictions) of more than the reclaimer's slack.
	fill(1, 96)
	for i := range 96 {
		if _, err := s.DeleteGroup(ctx, 1, fmt.Appendf(nil, "chunk%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitPhysicalBelow(reclaimMinSlack)
}

func TestSetExpireRewritesOnlyTheExpiry(t *testing.T) {
	values := map[string][]byte{
		"inline": randomBytes(1, 28),
		"pebble": bf16KV(2, 5000),
		"vlog":   bf16KV(3, 4<<20+1),
	}
	ctx := context.Background()
	for _, codec := range []Compression{CompressionNone, CompressionZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			s := openTest(t, Options{Compression: codec})
			for name, v := range values {
				mustPut(t, s, 0, name, v, RecordMeta{Shuffle: true})
				before := s.DiskUsage()
				later := time.Now().Add(time.Hour).UnixMilli()
				if err := s.SetExpire(ctx, 0, []byte(name), later); err != nil {
					t.Fatalf("%s: SetExpire: %v", name, err)
				}
				got, meta := mustGet(t, s, 0, name)
				if !bytes.Equal(got, v) || meta.ExpireAt != later || s.DiskUsage() != before {
					t.Fatalf("%s: after SetExpire: equal %v, expiry %d want %d, usage %d want %d",
						name, bytes.Equal(got, v), meta.ExpireAt, later, s.DiskUsage(), before)
				}
				if err := s.SetExpire(ctx, 0, []byte(name), 0); err != nil {
					t.Fatal(err)
				}
				if _, meta := mustGet(t, s, 0, name); meta.ExpireAt != 0 {
					t.Fatalf("%s: expiry %d after removing it", name, meta.ExpireAt)
				}
			}
			if err := s.SetExpire(ctx, 0, []byte("missing"), 1); !errors.Is(err, ErrNotFound) {
				t.Fatalf("SetExpire of a missing key: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestTheCallerJudgesExpiryForGetAliveAndSetExpire: the engine decides
// under its lock that a key is alive and reads or rewrites its record a
// moment later, when by the disk tier's clock the record's expiry may have
// passed. GetAlive returns such a record and keeps it; SetExpire gives it
// the new expiry (it reported ErrNotFound, and the engine lost a key
// whose new expiry the client had been told of). Get still judges.
func TestTheCallerJudgesExpiryForGetAliveAndSetExpire(t *testing.T) {
	values := map[string][]byte{
		"inline": randomBytes(1, 28),
		"pebble": bf16KV(2, 5000),
		"vlog":   bf16KV(3, 4<<20+1),
	}
	now := time.UnixMilli(1_700_000_000_000)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	old := now.Add(time.Second).UnixMilli()
	for name, v := range values {
		mustPut(t, s, 0, name, v, RecordMeta{ExpireAt: old, Shuffle: true})
	}
	now = now.Add(2 * time.Second)
	later := now.Add(time.Hour).UnixMilli()
	for name, v := range values {
		got, meta, err := s.GetAlive(ctx, 0, []byte(name))
		if err != nil || !bytes.Equal(got, v) || meta.ExpireAt != old {
			t.Fatalf("%s: GetAlive past the expiry: %v, equal %v, expiry %d; want the value, expiry %d",
				name, err, bytes.Equal(got, v), meta.ExpireAt, old)
		}
	}
	if st := s.Stats(); st.Keys != 3 || st.Expired != 0 {
		t.Fatalf("after GetAlive: %d keys, %d expired; want 3 and 0", st.Keys, st.Expired)
	}
	for _, name := range []string{"inline", "pebble"} {
		if err := s.SetExpire(ctx, 0, []byte(name), later); err != nil {
			t.Fatalf("%s: SetExpire past the old expiry: %v", name, err)
		}
		if got, meta := mustGet(t, s, 0, name); !bytes.Equal(got, values[name]) || meta.ExpireAt != later {
			t.Fatalf("%s: after SetExpire: equal %v, expiry %d want %d", name, bytes.Equal(got, values[name]), meta.ExpireAt, later)
		}
	}
	wantNotFound(t, s, 0, "vlog")
	if st := s.Stats(); st.Keys != 2 || st.Expired != 1 {
		t.Fatalf("after Get of the expired record: %d keys, %d expired; want 2 and 1", st.Keys, st.Expired)
	}
}

// TestPutGroupTrustsTheFootprintItReplaces writes records over records
// whose footprint the caller gives (Entry.Replaces, as Written reported
// it): the accounting is what reading the old headers gives, and a record
// that becomes inline leaves no payload key behind.
func TestPutGroupTrustsTheFootprintItReplaces(t *testing.T) {
	ctx := context.Background()
	for _, codec := range []Compression{CompressionNone, CompressionS2} {
		trusting := openTest(t, Options{Compression: codec})
		reading := openTest(t, Options{Compression: codec})
		values := [][]byte{bf16KV(1, 4096), bf16KV(2, 1<<20), []byte("inline now"), randomBytes(3, 300<<10), bf16KV(4, 2000)}
		var written Footprint
		for i, v := range values {
			entries := []Entry{{Key: []byte("k"), Value: v, Replaces: written, Fresh: i == 0}}
			if err := trusting.PutGroup(ctx, 0, entries); err != nil {
				t.Fatal(err)
			}
			if entries[0].Written.Size != int64(len(v)) || entries[0].Written.StoredSize <= 0 {
				t.Fatalf("write %d: Written = %+v for a %d-byte value", i, entries[0].Written, len(v))
			}
			written = entries[0].Written
			if err := reading.PutGroup(ctx, 0, []Entry{{Key: []byte("k"), Value: v, Fresh: i == 0}}); err != nil {
				t.Fatal(err)
			}
			a, b := trusting.Stats(), reading.Stats()
			if a.Keys != 1 || a.Bytes != b.Bytes || a.RawBytes != b.RawBytes || a.Bytes != written.StoredSize {
				t.Fatalf("codec %v, write %d: trusting %d keys %d bytes %d raw; reading %d bytes %d raw; written %+v",
					codec, i, a.Keys, a.Bytes, a.RawBytes, b.Bytes, b.RawBytes, written)
			}
			got, meta := mustGet(t, trusting, 0, "k")
			if !bytes.Equal(got, v) || meta.Footprint() != written {
				t.Fatalf("write %d: read %d bytes, footprint %+v; want %d, %+v", i, len(got), meta.Footprint(), len(v), written)
			}
			_, closer, err := trusting.pebbleDB().Get(encodeKey(nil, prefixValue, 0, []byte("k")))
			if err == nil {
				closer.Close()
			}
			if inline := len(v) <= inlineMax; inline != (err != nil) {
				t.Fatalf("write %d: %d-byte value, payload key present = %v", i, len(v), err == nil)
			}
		}
		// The header is not read: a footprint given wrong is what counts.
		before := trusting.Stats().Bytes
		entries := []Entry{{Key: []byte("k"), Value: values[0], Replaces: Footprint{Size: 1, StoredSize: 1}}}
		if err := trusting.PutGroup(ctx, 0, entries); err != nil {
			t.Fatal(err)
		}
		if got, want := trusting.Stats().Bytes, before-1+entries[0].Written.StoredSize; got != want {
			t.Fatalf("codec %v: %d bytes after a write that replaced a 1-byte footprint; want %d (was the header read?)", codec, got, want)
		}
	}
}
