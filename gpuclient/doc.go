// Package gpuclient is the engine side of kvserver: it moves KV-cache chunks
// between an inference engine's paged cache and kvserver.
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
// It is not a server component: it talks to kvserver only over RESP, like
// any client, and nothing under resp, engine or lsm imports it. It loads no
// C library: the CUDA device that launches package cuda's kernels is in
// package gpuclient/cudadev.
package gpuclient
