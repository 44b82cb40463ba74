package disktier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"syscall"
	"testing"
	"time"
)

func TestIsDiskErrorTellsTheFileSystemFromTheStore(t *testing.T) {
	for _, err := range []error{
		syscall.ENOSPC, syscall.EROFS, syscall.EIO,
		fmt.Errorf("disktier: value log write: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.EROFS}),
	} {
		if !isDiskError(err) {
			t.Errorf("isDiskError(%v) = false", err)
		}
	}
	for _, err := range []error{nil, ErrDiskFull, ErrTooLarge, ErrClosed, context.Canceled,
		fmt.Errorf("%w: %s", ErrUnavailable, "no space left on device"), errors.New("other")} {
		if isDiskError(err) {
			t.Errorf("isDiskError(%v) = true", err)
		}
	}
}

func TestHealthFailsFastAndPacesProbes(t *testing.T) {
	h := health{log: slog.New(slog.DiscardHandler)}
	now := time.Unix(1000, 0)
	if err := h.admitWrite(now); err != nil {
		t.Fatalf("healthy disk refused a write: %v", err)
	}
	if h.claimProbe(now) {
		t.Fatal("a probe was due on a healthy disk")
	}
	h.fail(&fs.PathError{Op: "write", Path: "seg", Err: syscall.EROFS}, now)
	// Writes fail fast for as long as the disk is failing: only the probe
	// retries (a write's success without a WAL proves nothing).
	for _, d := range []time.Duration{time.Millisecond, time.Minute} {
		if err := h.admitWrite(now.Add(d)); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("write %v after a failure: %v, want ErrUnavailable", d, err)
		}
	}
	// Probes 1, 2, 4 and then every 5 s after the failure, whatever else
	// fails meanwhile (Pebble's retries must not delay them).
	at := now
	for i, gap := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		h.fail(syscall.ENOSPC, at.Add(gap/2))
		if h.claimProbe(at.Add(gap - time.Millisecond)) {
			t.Fatalf("probe %d claimed before its %v backoff", i, gap)
		}
		at = at.Add(gap)
		if !h.claimProbe(at) {
			t.Fatalf("probe %d not due %v after the previous one", i, gap)
		}
		if h.claimProbe(at) {
			t.Fatalf("probe %d claimed twice", i)
		}
	}
	var st Stats
	h.report(&st)
	if !st.Unavailable || st.DiskErrors != 6 || st.LastDiskError == "" {
		t.Fatalf("report while failing: %+v", st)
	}
	h.ok(at)
	if err := h.admitWrite(at); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	st = Stats{}
	h.report(&st)
	if st.Unavailable || st.DiskErrors != 6 {
		t.Fatalf("report after recovery: %+v", st)
	}
}
