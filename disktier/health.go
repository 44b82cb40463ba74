package disktier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kvserver/kvserver/wake"
)

// ErrUnavailable: the disk refused a recent write (full file system,
// read-only mount, I/O error), so writes fail fast with it, without
// touching Pebble, until the store's own probe finds the disk taking
// writes again. Reads go on. The caller keeps serving from memory.
var ErrUnavailable = errors.New("disktier: disk tier unavailable")

// Probe pacing while the disk is unavailable. Writes do not retry: a write
// without a WAL lands in a memtable whatever the disk, so its success
// proves nothing, and writes taking every retry slot kept a freed disk
// "unavailable" for 40 s and more. Instead probeLoop writes and syncs a
// small file of its own, 1, 2, 4 and then every 5 s after the failure.
const (
	healthFirstBackoff = time.Second
	healthMaxBackoff   = 5 * time.Second
	// probeTick is how often probeLoop looks whether a probe is due.
	probeTick = 250 * time.Millisecond
	// probeSize is what a probe writes: a disk with less room than that
	// would refuse the next value anyway.
	probeSize = 1 << 20
	// healthLogEvery bounds the error lines logged while the disk stays
	// unavailable: a full disk made Pebble retry its flush in a loop and
	// log a stack trace on each try (1.8 GB of log in a minute).
	healthLogEvery = 30 * time.Second
)

// health tracks whether the disk accepts writes. The Store fails writes fast
// while it does not, so that no caller blocks in a Pebble write stall behind
// a memtable that cannot be flushed.
type health struct {
	log *slog.Logger

	mu         sync.Mutex
	failing    bool
	since      time.Time
	lastErr    string
	errors     int64
	retryAt    time.Time
	backoff    time.Duration
	lastLog    time.Time
	suppressed int64
}

// isDiskError reports whether err came from the operating system (a
// syscall errno or a path error), as opposed to an error of the Store's
// own (ErrDiskFull, ErrTooLarge, a cancelled context).
func isDiskError(err error) bool {
	if err == nil || errors.Is(err, ErrDiskFull) || errors.Is(err, ErrTooLarge) ||
		errors.Is(err, ErrClosed) || errors.Is(err, ErrUnavailable) {
		return false
	}
	var errno syscall.Errno
	var perr *fs.PathError
	return errors.As(err, &errno) || errors.As(err, &perr)
}

// noteDiskError records err in the store's health when it is an error of
// the disk (see isDiskError); other errors and nil are ignored.
func (s *Store) noteDiskError(err error) {
	if isDiskError(err) {
		s.health.fail(err, s.now())
	}
}

// admitWrite returns ErrUnavailable while the disk is failing.
func (h *health) admitWrite(now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnavailable, h.lastErr)
}

// claimProbe reports whether the disk is failing and a probe is due; a
// claimed probe pushes the next one a backoff further (1, 2, 4, then 5 s).
func (h *health) claimProbe(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing || now.Before(h.retryAt) {
		return false
	}
	h.backoff = min(h.backoff*2, healthMaxBackoff)
	h.retryAt = now.Add(h.backoff)
	return true
}

// fail records a disk error. Errors while failing (Pebble's own retries,
// failed probes) are counted but do not delay the next probe.
func (h *health) fail(err error, now time.Time) {
	msg := firstLine(err.Error())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errors++
	h.lastErr = msg
	if !h.failing {
		h.failing, h.since, h.backoff = true, now, healthFirstBackoff
		h.retryAt = now.Add(healthFirstBackoff)
		h.lastLog, h.suppressed = now, 0
		h.log.Error("disktier: disk tier unavailable: writes to disk fail fast and the memory tier keeps serving", "err", msg)
		return
	}
	if now.Sub(h.lastLog) < healthLogEvery {
		h.suppressed++
		return
	}
	h.log.Error("disktier: disk tier still unavailable", "err", msg, "since", h.since.UTC().Format(time.RFC3339),
		"errors_since_last_line", h.suppressed+1, "next_retry_at", h.retryAt.UTC().Format(time.RFC3339))
	h.lastLog, h.suppressed = now, 0
}

// ok records a write that reached the disk.
func (h *health) ok(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return
	}
	h.failing = false
	h.log.Info("disktier: disk tier available again", "unavailable_for", now.Sub(h.since).Round(time.Millisecond))
}

// unavailable reports whether the disk is failing.
func (h *health) unavailable() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failing
}

// report fills the health fields of st.
func (h *health) report(st *Stats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st.DiskErrors = h.errors
	st.Unavailable = h.failing
	st.LastDiskError = h.lastErr
	if h.failing {
		st.UnavailableSince = h.since
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// backoffBackgroundError slows Pebble's retries of a failing flush or
// compaction. Pebble calls its BackgroundError listener from the failing
// goroutine and then reschedules the flush at once, in a loop that burned
// more than a core on a full disk; sleeping here paces that loop. The sleep
// is bounded (1 s), because Pebble holds its mutex while calling the
// listener and Close waits for it. Reads do not take that mutex.
func backoffBackgroundError(consecutive int) time.Duration {
	d := 10 * time.Millisecond << min(consecutive, 7)
	return min(d, time.Second)
}

// probeLoop runs while the store is open: when the disk is failing and a
// probe is due it writes probeSize bytes to a file of its own and syncs
// them; success makes the disk available again. It also syncs the delete
// log and applies the deletes logged while the disk was unavailable
// (deletelog.go) once it is back, retrying every tick until they are
// durable in Pebble.
func (s *Store) probeLoop(ctx context.Context) {
	defer close(s.probeDone)
	wake.Every(ctx, probeTick, func(time.Time) {
		if err := s.dlog.sync(); err != nil {
			s.log.Error("disktier: delete log", "err", err)
		}
		now := s.now()
		if s.health.claimProbe(now) {
			if err := s.probeDisk(); err != nil {
				s.health.fail(err, s.now())
				return
			}
			s.health.ok(s.now())
		}
		if s.dlog.count() > 0 && !s.health.unavailable() {
			if err := s.applyDeletes(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, ErrUnavailable) {
				s.log.Error("disktier: applying deletes logged while the disk was unavailable", "err", err)
			}
		}
	})
}

// probeDisk writes, syncs and removes a file next to the value log.
func (s *Store) probeDisk() error {
	path := filepath.Join(s.vlog.dir, "probe.tmp")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("disktier: disk probe: %w", err)
	}
	_, err = f.Write(make([]byte, probeSize))
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if rerr := os.Remove(path); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("disktier: disk probe: %w", err)
	}
	return nil
}
