package gpuclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvserver/kvserver/kvmeta"
)

// Reading one chunk back is two GETs, metadata first, pipelined with the
// other chunks'. readPair validates them before a single byte reaches the
// paged cache: the metadata must be byte for byte the one this connector
// writes for that shape, and the data exactly as long as it promises.

// queueGets appends GET <meta> and GET <data> for each key pair.
func (cn *conn) queueGets(meta, data []string) {
	for i := range meta {
		cn.out.Add("GET", meta[i])
		cn.out.Add("GET", data[i])
	}
}

// readPair reads the replies to GET <meta> and GET <data> of one chunk.
// When both are as expected, the data is read into the buffer that dst
// returns (called only then, so a caller may block in it for a free
// buffer) and returned. Otherwise the chunk's replies are consumed and
// fail says why (wrapping ErrChunkMissing or ErrChunkCorrupt). err is an
// I/O or protocol error or dst's, after which the connection is not
// usable.
func (cn *conn) readPair(wantMeta []byte, size int, dst func() ([]byte, error)) (buf []byte, fail, err error) {
	var got [kvmeta.Size]byte
	n, err := cn.readBulkLen()
	switch {
	case serverError(err):
		fail, err = fmt.Errorf("%w: GET metadata: %v", ErrChunkCorrupt, err), nil
	case err != nil:
		return nil, nil, err
	case n < 0:
		fail = fmt.Errorf("%w: no metadata", ErrChunkMissing)
	case n != len(wantMeta):
		if err := cn.skipBulkBody(n); err != nil {
			return nil, nil, err
		}
		fail = fmt.Errorf("%w: metadata of %d bytes, want %d", ErrChunkCorrupt, n, len(wantMeta))
	default:
		if err := cn.readBulkBody(got[:n]); err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(got[:n], wantMeta) {
			fail = fmt.Errorf("%w: metadata %x, want %x", ErrChunkCorrupt, got[:n], wantMeta)
		}
	}
	n, err = cn.readBulkLen()
	switch {
	case serverError(err):
		if fail == nil {
			fail = fmt.Errorf("%w: GET data: %v", ErrChunkCorrupt, err)
		}
		return nil, fail, nil
	case err != nil:
		return nil, nil, err
	case n < 0:
		if fail == nil {
			fail = fmt.Errorf("%w: no data", ErrChunkMissing)
		}
		return nil, fail, nil
	case fail != nil || n != size:
		if err := cn.skipBulkBody(n); err != nil {
			return nil, nil, err
		}
		if fail == nil {
			fail = fmt.Errorf("%w: data of %d bytes, want %d", ErrChunkCorrupt, n, size)
		}
		return nil, fail, nil
	}
	if buf, err = dst(); err != nil {
		return nil, nil, err
	}
	if err := cn.readBulkBody(buf[:size]); err != nil {
		return nil, nil, err
	}
	return buf, nil, nil
}

// serverError reports whether err is an error reply, after which the
// connection is still in sync.
func serverError(err error) bool {
	var se *ServerError
	return errors.As(err, &se)
}

// dropFailed deletes both keys of every failed chunk (or chunk layer), as
// LMCache's connector deletes a chunk's metadata when its data is gone:
// otherwise the metadata would keep making the chunk look present, and
// every later store would skip it instead of writing it again.
func (c *Connector) dropFailed(ctx context.Context, failed []ChunkError) error {
	if len(failed) == 0 {
		return nil
	}
	args := make([]string, 0, 1+2*len(failed))
	args = append(args, "DEL")
	for _, f := range failed {
		base := strings.TrimSuffix(f.Key, DataSuffix)
		args = append(args, base+DataSuffix, base+MetadataSuffix)
	}
	err := c.client.with(ctx, func(cn *conn) error {
		cn.out.Add(args...)
		if err := cn.flush(); err != nil {
			return err
		}
		_, err := cn.readInt()
		return err
	})
	if err != nil {
		return fmt.Errorf("delete failed chunks' keys: %w", err)
	}
	return nil
}
