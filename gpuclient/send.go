package gpuclient

import "fmt"

// A store writes SET <k>kv_bytes <data> then SET <k>metadata <28 bytes>
// for each chunk (LMCache's order: a client that sees the metadata can
// rely on the data being there), pipelined: a sender writes them from its
// own goroutine while the caller gathers the next buffer, and reads the
// +OK replies on a third, so no write ever waits for a round trip.

// pair is one chunk's (or chunk layer's) two keys and values.
type pair struct {
	chunk      int // index in the sender's chunk counts
	data, meta string
	value      []byte
	metaValue  []byte
}

// sendJob is a batch of pairs written with one vectored write. buf, when
// not nil, is the staging buffer the values live in; it goes back to the
// sender's free channel once written. acked, when not nil, is called (on
// the reply goroutine) once the batch's replies are all read, with the
// first error among them.
type sendJob struct {
	pairs []pair
	buf   []byte
	acked func(error)
}

// sender owns one connection for the duration of a store.
type sender struct {
	cn        *conn
	free      chan<- []byte
	jobs      chan sendJob
	acks      chan sendJob
	done      chan struct{}
	perChunk  int   // pairs that make a chunk complete
	okPairs   []int // per chunk: pairs acknowledged +OK
	bytes     int64 // data bytes acknowledged
	writeErr  error
	replyErr  error // first I/O error on the reply side
	serverErr error // first error reply
}

// newSender starts the writer and reply goroutines for a store of chunks
// chunks of perChunk pairs each. Close must be called to stop them.
func newSender(cn *conn, free chan<- []byte, chunks, perChunk int) *sender {
	s := &sender{
		cn:       cn,
		free:     free,
		jobs:     make(chan sendJob, 1),
		acks:     make(chan sendJob, 64),
		done:     make(chan struct{}),
		perChunk: perChunk,
		okPairs:  make([]int, chunks),
	}
	go s.write()
	go s.readReplies()
	return s
}

// send queues a job; it blocks while the writer is busy with the previous
// one.
func (s *sender) send(j sendJob) { s.jobs <- j }

// write is the writer goroutine. After an error it keeps taking jobs,
// only returning their buffers, so that send never blocks for good.
func (s *sender) write() {
	defer close(s.acks)
	for j := range s.jobs {
		if s.writeErr == nil {
			for _, p := range j.pairs {
				s.cn.out.AddValue(p.value, "SET", p.data)
				s.cn.out.AddValue(p.metaValue, "SET", p.meta)
			}
			if err := s.cn.flush(); err != nil {
				s.writeErr = err
			}
		}
		if j.buf != nil {
			s.free <- j.buf
		}
		if s.writeErr != nil {
			if j.acked != nil {
				j.acked(s.writeErr)
			}
			continue
		}
		s.acks <- j
	}
}

// readReplies is the reply goroutine: two +OK per pair, in order.
func (s *sender) readReplies() {
	defer close(s.done)
	for j := range s.acks {
		var first error
		for _, p := range j.pairs {
			if s.replyErr != nil {
				first = s.replyErr
				break
			}
			ok := true
			for range 2 {
				err := s.cn.readOK()
				switch {
				case err == nil:
				case serverError(err):
					ok = false
					if s.serverErr == nil {
						s.serverErr = fmt.Errorf("gpuclient: SET %s: %w", p.data, err)
					}
				default:
					ok = false
					s.replyErr = err
					// The writer may be blocked on a socket the server no
					// longer reads: unblock it.
					s.cn.interrupt()
				}
				if s.replyErr != nil {
					break
				}
			}
			if ok {
				s.okPairs[p.chunk]++
				s.bytes += int64(len(p.value))
			}
			if first == nil {
				first = s.replyErr
				if first == nil && !ok {
					first = s.serverErr
				}
			}
		}
		if j.acked != nil {
			j.acked(first)
		}
	}
}

// close waits for every queued job to be written and acknowledged and
// returns the number of complete chunks stored, the data bytes, and the
// first error: an I/O error first, else an error reply.
func (s *sender) close() (stored int, bytes int64, err error) {
	close(s.jobs)
	<-s.done
	for _, n := range s.okPairs {
		if n == s.perChunk {
			stored++
		}
	}
	switch {
	case s.writeErr != nil:
		err = s.writeErr
	case s.replyErr != nil:
		err = s.replyErr
	default:
		err = s.serverErr
	}
	return stored, s.bytes, err
}
