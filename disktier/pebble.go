package disktier

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleOptions returns the Pebble configuration; doc.go explains each
// choice.
func pebbleOptions(opts Options, log *slog.Logger, h *health) *pebble.Options {
	memtable := opts.MemTableSize
	if memtable <= 0 {
		memtable = DefaultMemTableSize
	}
	po := &pebble.Options{
		FormatMajorVersion:          pebble.FormatValueSeparation,
		MemTableSize:                uint64(memtable),
		MemTableStopWritesThreshold: 4,
		// Headers are small; L0 files come from flushes of 64 MiB memtables
		// whose keys are mostly in blob files, so L0 stays tiny and a few
		// more sublevels before stalling cost little read amplification.
		L0CompactionThreshold: 4,
		L0StopWritesThreshold: 24,
		LBaseMaxBytes:         64 << 20,
		// Pebble writes one blob file per output sstable and sizes outputs
		// including the values they reference, so the default 2 MiB target
		// made a blob file (and an fsync) per two 1 MiB values. One flush of
		// a memtable becomes one blob file instead; values written together
		// are evicted together, so such files mostly die whole.
		TargetFileSizes: [7]int64{64 << 20},
		// Two cores: one compaction normally, a second under L0 pressure.
		CompactionConcurrencyRange: func() (int, int) { return 1, 2 },
		// Smooth write-back of blob files and WAL instead of one large
		// flush of dirty pages at fsync time.
		BytesPerSync:    512 << 10,
		WALBytesPerSync: 1 << 20,
		DisableWAL:      !opts.WAL && !opts.Sync,
		// Headers and small values only: the large values bypass the cache
		// on their way to the caller anyway.
		CacheSize: 32 << 20,
		// Let FlushDB's range deletions reach the delete-only compactions
		// that free their space without waiting for the memtable to fill.
		FlushDelayDeleteRange: 10 * time.Second,
		Logger:                pebbleLogger{log},
		EventListener:         eventListener(log, h),
	}
	po.Experimental.EnableColumnarBlocks = func() bool { return true }
	po.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled: true,
			// Every payload above inlineMax lives under a 'v' key; those
			// from 1 KiB up go to blob files and are never rewritten by
			// ordinary compactions.
			MinimumSize: 1 << 10,
			// Records are only read by point lookups, so the locality a low
			// depth buys scans is worth nothing; a high depth keeps
			// compactions from rewriting values.
			MaxBlobReferenceDepth: 64,
			// Groups are written and evicted roughly in age order, so blob
			// files die mostly whole; rewrite one only when half of it is
			// garbage and it is old enough that the rest is likely to stay.
			RewriteMinimumAge:  time.Minute,
			TargetGarbageRatio: 0.5,
		}
	}
	// Values arrive compressed (or incompressible); Pebble compressing them
	// again (its blob files use the level's setting) would only burn CPU.
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	for i := range po.Levels {
		po.Levels[i].BlockSize = 32 << 10
	}
	return po
}

// pebbleLogger sends Pebble's log lines to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble on invariant violations it cannot continue
// from; like Pebble's default logger it does not return.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	panic("pebble: " + msg)
}

func eventListener(log *slog.Logger, h *health) *pebble.EventListener {
	var consecutive atomic.Int64
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if isDiskError(err) {
				h.fail(err, time.Now())
				time.Sleep(backoffBackgroundError(int(consecutive.Add(1))))
				return
			}
			// %v of Pebble's errors, not slog's %+v with stack traces.
			log.Error("disktier: pebble background error", "err", firstLine(err.Error()))
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				consecutive.Store(0)
				h.ok(time.Now())
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			log.Error("disktier: pebble data corruption", "info", info.String())
		},
		DiskSlow: func(info pebble.DiskSlowInfo) {
			log.Warn("disktier: disk slow", "info", info.String())
		},
		// Stalls are routine back-pressure under a burst of large values
		// (each memtable holds two 32 MiB chunks): debug, not a warning.
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			log.Debug("disktier: write stall", "reason", info.Reason)
		},
		WriteStallEnd: func() { log.Debug("disktier: write stall ended") },
	}
}
