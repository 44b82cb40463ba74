package lsm

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
		fmt.Errorf("lsm: value log write: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.EROFS}),
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

func TestHealthFailsFastThenLetsOneRetryThrough(t *testing.T) {
	h := health{log: slog.New(slog.DiscardHandler)}
	now := time.Unix(1000, 0)
	if err := h.admitWrite(now); err != nil {
		t.Fatalf("healthy disk refused a write: %v", err)
	}
	h.fail(&fs.PathError{Op: "write", Path: "seg", Err: syscall.EROFS}, now)
	if err := h.admitWrite(now.Add(time.Millisecond)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write right after a failure: %v, want ErrUnavailable", err)
	}
	due := now.Add(healthFirstBackoff)
	if err := h.admitWrite(due); err != nil {
		t.Fatalf("retry due after the backoff was refused: %v", err)
	}
	if err := h.admitWrite(due); !errors.Is(err, ErrUnavailable) {
		t.Fatal("a second write got through while the first retry was in flight")
	}
	h.fail(syscall.EROFS, due)
	if err := h.admitWrite(due.Add(healthFirstBackoff)); err == nil {
		t.Fatal("backoff did not grow after a failed retry")
	}
	var st Stats
	h.report(&st)
	if !st.Unavailable || st.DiskErrors != 2 || st.LastDiskError == "" {
		t.Fatalf("report while failing: %+v", st)
	}
	h.ok(due.Add(time.Minute))
	if err := h.admitWrite(due.Add(time.Minute)); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	st = Stats{}
	h.report(&st)
	if st.Unavailable || st.DiskErrors != 2 {
		t.Fatalf("report after recovery: %+v", st)
	}
}
