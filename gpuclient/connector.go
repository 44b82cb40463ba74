package gpuclient

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/kvserver/kvserver/kvmeta"
)

// DefaultLease is how long Retrieve's probe leases the chunks it found
// against eviction (Mooncake's store uses the same 10 s).
const DefaultLease = 10 * time.Second

// DefaultStaging is how many chunk buffers one Store or Retrieve uses, so
// that the device copy of one chunk overlaps the transfer of the next.
const DefaultStaging = 2

// Config describes the model and engine worker a Connector serves.
type Config struct {
	// Prefix names the worker's keys. Its DType, when zero, is taken from
	// Paged; otherwise it must equal Paged.DType.
	Prefix KeyPrefix
	// Paged is the layout of every layer of the engine's paged cache.
	Paged PagedLayout
	// Layers is the number of layers (paged buffers) of the model.
	Layers int
	// ChunkTokens is the chunk size in tokens; default DefaultChunkTokens.
	ChunkTokens int
	// Lease is how long a retrieval's probe protects the chunks it found;
	// default DefaultLease, rounded up to whole milliseconds.
	Lease time.Duration
	// Device copies between the paged cache and chunk buffers; default
	// CPUDevice.
	Device Device
	// Staging is the number of chunk buffers a Store or Retrieve cycles
	// through; default DefaultStaging, at least 2.
	Staging int
}

// Connector stores and retrieves the KV cache of one engine worker: the
// paged buffers it was given (one per layer) and the chunks of token
// sequences in them. It is LMCache's connector for one worker, talking to
// kvserver over RESP through a Client.
//
// Whole-chunk operations (Store, Retrieve) keep one pair of keys per chunk,
// model@ws@id@hash@dtype followed by "kv_bytes" (the chunk, KV_2LTD or
// KV_MLA_FMT for MLA) and "metadata" (its 28 bytes). Layer-wise operations
// (StoreLayers, RetrieveLayers) keep one pair per chunk and layer, the key
// ending in @<layer>, the value KV_T2D (KV_MLA_FMT with one layer for MLA).
// Only full chunks are stored or looked up: a trailing partial chunk's key
// could never match the chunk it becomes once full, so LMCache drops it,
// and so does the Connector.
//
// A Connector is safe for concurrent use; operations on overlapping slots
// of the paged cache are the caller's to order.
type Connector struct {
	client *Client
	cfg    Config
	kv     [][]byte
	chunk  Chunk // a whole chunk
	layer  Chunk // one layer of a chunk
	meta   []byte
	lmeta  []byte
	bufs   bufPool
}

// ErrChunkMissing is wrapped by a ChunkError for a chunk (or chunk layer)
// whose data or metadata key is gone.
var ErrChunkMissing = errors.New("gpuclient: chunk missing")

// ErrChunkCorrupt is wrapped by a ChunkError for a chunk whose stored
// value does not have the expected length or whose metadata differs from
// the chunk expected at that key.
var ErrChunkCorrupt = errors.New("gpuclient: chunk corrupt")

// ChunkError is a chunk that could not be loaded. Its bytes were never
// scattered into the paged cache.
type ChunkError struct {
	Chunk int    // index of the chunk in the token sequence
	Layer int    // the layer, in layer-wise mode; -1 for a whole chunk
	Key   string // the data key
	Err   error  // wraps ErrChunkMissing or ErrChunkCorrupt
}

// Error implements error.
func (e *ChunkError) Error() string {
	where := "chunk " + strconv.Itoa(e.Chunk)
	if e.Layer >= 0 {
		where += " layer " + strconv.Itoa(e.Layer)
	}
	return fmt.Sprintf("gpuclient: %s (%s): %v", where, e.Key, e.Err)
}

// Unwrap returns Err.
func (e *ChunkError) Unwrap() error { return e.Err }

// StoreResult is what a Store or a layer-wise store did.
type StoreResult struct {
	// Chunks is the number of full chunks in the tokens.
	Chunks int
	// Present is how many leading chunks the server already had; they
	// were not gathered or sent.
	Present int
	// Stored is how many chunks were written (Chunks - Present on success).
	Stored int
	// Bytes is the data written, metadata excluded.
	Bytes int64
}

// RetrieveResult is what a Retrieve or a layer-wise retrieval loaded.
type RetrieveResult struct {
	// Tokens is the number of leading tokens whose KV is now in the paged
	// cache: Loaded chunks' worth. The engine computes the rest.
	Tokens int
	// Chunks is the number of full chunks in the tokens.
	Chunks int
	// Found is how many leading chunks the probe found on the server.
	Found int
	// Loaded is how many leading chunks were scattered.
	Loaded int
	// Failed lists the chunks that were found but could not be loaded; the
	// loaded prefix stops at the first of them.
	Failed []ChunkError
	// Bytes is the chunk data scattered.
	Bytes int64
}

// NewConnector returns a connector for the engine worker whose paged cache
// is kvCaches (one buffer per layer, each cfg.Paged.LayerBytes() long).
// The buffers are used, not copied: stores read them and retrievals write
// them.
func NewConnector(client *Client, cfg Config, kvCaches [][]byte) (*Connector, error) {
	if client == nil {
		return nil, errors.New("gpuclient: NewConnector: nil client")
	}
	if cfg.ChunkTokens <= 0 {
		cfg.ChunkTokens = DefaultChunkTokens
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Device == nil {
		cfg.Device = CPUDevice{}
	}
	if cfg.Staging <= 0 {
		cfg.Staging = DefaultStaging
	}
	cfg.Staging = max(cfg.Staging, 2)
	if cfg.Prefix.DType == 0 {
		cfg.Prefix.DType = cfg.Paged.DType
	}
	if cfg.Prefix.DType != cfg.Paged.DType {
		return nil, fmt.Errorf("%w: key dtype %v differs from the cache's %v", ErrLayout, cfg.Prefix.DType, cfg.Paged.DType)
	}
	whole, layer := kvmeta.FormatKV2LTD, kvmeta.FormatKVT2D
	if cfg.Paged.Kind == MLA {
		whole, layer = kvmeta.FormatKVMLA, kvmeta.FormatKVMLA
	}
	c := &Connector{
		client: client,
		cfg:    cfg,
		kv:     kvCaches,
		chunk:  Chunk{Format: whole, Layers: cfg.Layers, Tokens: cfg.ChunkTokens, Paged: cfg.Paged},
		layer:  Chunk{Format: layer, Layers: 1, Tokens: cfg.ChunkTokens, Paged: cfg.Paged},
	}
	for _, ch := range []Chunk{c.chunk, c.layer} {
		if err := ch.Validate(); err != nil {
			return nil, err
		}
	}
	if len(kvCaches) != cfg.Layers {
		return nil, fmt.Errorf("%w: %d paged buffers for %d layers", ErrLayout, len(kvCaches), cfg.Layers)
	}
	for l, b := range kvCaches {
		if len(b) != cfg.Paged.LayerBytes() {
			return nil, fmt.Errorf("%w: paged buffer of layer %d is %d bytes, %v needs %d", ErrLayout, l, len(b), cfg.Paged, cfg.Paged.LayerBytes())
		}
	}
	c.meta = c.chunk.Metadata().Encode()
	c.lmeta = c.layer.Metadata().Encode()
	return c, nil
}

// ChunkShape is the Chunk a whole-chunk operation stores per key.
func (c *Connector) ChunkShape() Chunk { return c.chunk }

// LayerShape is the Chunk a layer-wise operation stores per key.
func (c *Connector) LayerShape() Chunk { return c.layer }

// leaseMs is the lease in whole milliseconds, at least 1.
func (c *Connector) leaseMs() int64 {
	return max(1, int64((c.cfg.Lease+time.Millisecond-1)/time.Millisecond))
}

// plan checks the arguments and returns the hashes of the full chunks.
func (c *Connector) plan(tokens []uint32, slots []int64) ([]Hash, error) {
	if len(slots) != len(tokens) {
		return nil, fmt.Errorf("gpuclient: %d slots for %d tokens", len(slots), len(tokens))
	}
	t := c.cfg.ChunkTokens
	n := len(tokens) / t
	return ChunkHashes(tokens[:n*t], t), nil
}

// chunkSlots is the slot mapping of chunk i.
func (c *Connector) chunkSlots(slots []int64, i int) []int64 {
	t := c.cfg.ChunkTokens
	return slots[i*t : (i+1)*t]
}

// chunkKeys are the data and metadata keys of whole chunks.
func (c *Connector) chunkKeys(hashes []Hash) (data, meta []string) {
	data, meta = make([]string, len(hashes)), make([]string, len(hashes))
	for i, h := range hashes {
		k := c.cfg.Prefix.ChunkKey(h)
		data[i], meta[i] = k+DataSuffix, k+MetadataSuffix
	}
	return data, meta
}

// layerKeys are the data and metadata keys of every layer of every chunk,
// chunk-major: index i*Layers + l is layer l of chunk i. A probe over the
// metadata keys in this order finds whole chunks as runs of Layers keys.
func (c *Connector) layerKeys(hashes []Hash) (data, meta []string) {
	n := len(hashes) * c.cfg.Layers
	data, meta = make([]string, n), make([]string, n)
	for i, h := range hashes {
		base := c.cfg.Prefix.ChunkKey(h) + "@"
		for l := range c.cfg.Layers {
			k := base + strconv.Itoa(l)
			data[i*c.cfg.Layers+l], meta[i*c.cfg.Layers+l] = k+DataSuffix, k+MetadataSuffix
		}
	}
	return data, meta
}

// bufPool keeps staging buffers between operations so that a steady
// stream of stores and retrievals allocates none. It keeps at most
// maxPooled buffers; a buffer is reused for any request up to its capacity.
type bufPool struct {
	mu   sync.Mutex
	free [][]byte
}

// maxPooled bounds the buffers a pool keeps: enough for one store and one
// retrieval at a time to allocate nothing.
const maxPooled = 4

func (p *bufPool) get(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) >= n {
			p.free = append(p.free[:i], p.free[i+1:]...)
			return b[:n]
		}
	}
	return make([]byte, n)
}

func (p *bufPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxPooled {
		p.free = append(p.free, b)
	}
}
