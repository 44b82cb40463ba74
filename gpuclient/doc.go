// Package gpuclient is the engine side of kvserver: it moves KV-cache chunks
// between an inference engine's paged cache and kvserver.
//
// # Layouts and copies
//
// An engine keeps, per layer, a paged tensor (PagedLayout: vLLM
// flash-attention, flashinfer or MLA) in which a request's tokens sit at
// scattered slots (slot = block_id*block_size + offset). Storing a chunk
// gathers those tokens' rows from every layer into one contiguous buffer in
// one of LMCache's memory formats (Chunk: KV_2LTD, KV_T2D, KV_2TD,
// KV_MLA_FMT); loading scatters it back. Device is that copy; CPUDevice is
// its reference implementation on host memory, and the CUDA kernels in
// package cuda follow the same addressing (Chunk.Strides) and the same rule
// for negative slots (gather writes zeros, scatter skips).
//
// # Keys and metadata
//
// Chunk.Metadata gives the 28-byte metadata LMCache stores next to a chunk
// (package kvmeta encodes it). ChunkHashes and KeyPrefix name chunks the way
// LMCache does: a SHA-256 chained over the token ids of all earlier chunks
// (DefaultChunkTokens per chunk), in keys
// model@world_size@worker_id@<hash hex>@<dtype>[@<layer>] followed by
// "kv_bytes" or "metadata".
//
// PlanCake and RunCake are Cake's scheduler: a prefix is filled from both
// ends, computed from the front and loaded from the back, meeting where
// both finish together.
//
// # Storing and loading
//
// A Client is a pool of RESP connections to one server, built for
// multi-MiB values: a value is written from the caller's buffer with one
// vectored write and read from the socket straight into a reused staging
// buffer (see Client for why not go-redis). A Connector binds a Client to
// one engine worker: its model (Config: key prefix, paged layout, layers,
// chunk size, Device) and its paged buffers, one per layer.
//
//	cl := gpuclient.NewClient(gpuclient.ClientOptions{Addr: "127.0.0.1:6379"})
//	conn, err := gpuclient.NewConnector(cl, gpuclient.Config{
//		Prefix: gpuclient.KeyPrefix{Model: "meta-llama/Llama-3.1-8B", WorldSize: 1},
//		Paged:  paged, Layers: 32,
//	}, kvCaches)
//	res, err := conn.Store(ctx, tokens, slotMapping)    // after prefill
//	got, err := conn.Retrieve(ctx, tokens, slotMapping) // before prefill
//	// got.Tokens leading tokens are in the paged cache; compute the rest.
//
// Store and Retrieve work on whole chunks (one key pair per chunk, KV_2LTD
// or KV_MLA_FMT), full chunks only: like LMCache, a trailing partial chunk
// is neither stored nor looked up. Store skips the leading chunks the
// server already has (one KVC.PROBE) and pipelines the rest, gathering the
// next chunk while the previous one is sent. Retrieve probes with a lease
// (KVC.PROBE LEASE, so the chunks cannot be evicted before they are read),
// fetches the found prefix in one pipelined batch and scatters each chunk
// as it arrives. Every chunk is validated before it is scattered: its
// metadata must be exactly the one expected for the connector's shape and
// its data exactly as long; a missing or bad chunk ends the loaded prefix,
// is reported in RetrieveResult.Failed, and is never scattered (its keys
// are deleted, as LMCache does, so that the next Store rewrites it).
//
// # Layer by layer
//
// RetrieveLayers and StoreLayers keep one key pair per chunk and layer
// (KeyPrefix.LayerKey, KV_T2D per layer) so that transfers overlap the
// engine's forward pass. A LayerRetriever fetches layer l+1 from the server
// while its device goroutine scatters layer l and while the engine
// computes; WaitLayer(ctx, l) returns once layer l is in the paged cache. A
// LayerStorer mirrors it: LayerDone(ctx, l) tells it layer l is computed,
// and it gathers and sends that layer in the background while the engine
// computes the next. LayerOptions.Sequential turns the overlap off, for
// comparison (kvbench layerwise measures both).
//
//	lr, err := conn.RetrieveLayers(ctx, tokens, slotMapping, gpuclient.LayerOptions{})
//	for l := range layers {
//		if err := lr.WaitLayer(ctx, l); err != nil { ... }
//		// run layer l's attention
//	}
//	res, err := lr.Result(ctx)
//
// # What it is not
//
// It is not a server component: it talks to kvserver only over RESP, like
// any client, encoding and reading it with package respclient (its own
// batching of pinned-memory segments sits on top), and nothing under resp,
// engine or disktier imports it. It needs kvserver's KVC.PROBE, so plain
// Redis is not enough for Store and Retrieve. It loads no C library: the CUDA device that launches package
// cuda's kernels is in package gpuclient/cudadev and plugs in through
// Config.Device.
package gpuclient
