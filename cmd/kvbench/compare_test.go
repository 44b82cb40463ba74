package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty is zero", nil, 0},
		{"one value is itself", []float64{3}, 3},
		{"odd count takes the middle", []float64{5, 1, 3}, 3},
		{"even count averages the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"outliers do not move it", []float64{1, 1, 1, 100, 1000}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			if got := median(tt.xs); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
			}
			if !slices.Equal(in, tt.xs) {
				t.Errorf("median reordered its input: %v", tt.xs)
			}
		})
	}
}

func TestParseCompareFlagsDefaults(t *testing.T) {
	o, err := parseCompareFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSizes := []int64{4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 32 << 20}
	if !slices.Equal(o.sizes, wantSizes) {
		t.Errorf("sizes = %v, want %v", o.sizes, wantSizes)
	}
	if !slices.Equal(o.conns, []int{1, 8, 64}) {
		t.Errorf("conns = %v, want [1 8 64]", o.conns)
	}
	if o.pipeline != 1 || o.phaseTime != 2*time.Second || o.bytesPer != 512<<20 || o.maxMemBytes != 4<<30 {
		t.Errorf("pipeline %d, phase %s, bytes %d, maxmemory %d; want 1, 2s, 512 MiB, 4 GiB",
			o.pipeline, o.phaseTime, o.bytesPer, o.maxMemBytes)
	}
	if got := len(o.matrix()); got != 18 {
		t.Errorf("default matrix has %d configurations, want 6 sizes x 3 conns = 18", got)
	}
}

func TestParseCompareFlagsPipelinesOnlySmallValues(t *testing.T) {
	o, err := parseCompareFlags([]string{"--sizes", "4kb, 64kb,1mb", "--conns", "8", "--pipeline", "16", "--phase-seconds", "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	want := []compareConfig{{4 << 10, 8, 16}, {64 << 10, 8, 16}, {1 << 20, 8, 1}}
	if got := o.matrix(); !slices.Equal(got, want) {
		t.Errorf("matrix = %v, want %v", got, want)
	}
	if o.phaseTime != 500*time.Millisecond {
		t.Errorf("phase time = %s, want 500ms", o.phaseTime)
	}
}

func TestParseCompareFlagsRejects(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "4kb,huge"}, "--sizes"},
		{[]string{"--sizes", "0"}, "must be positive"},
		{[]string{"--conns", "8,0"}, "--conns"},
		{[]string{"--pipeline", "0"}, "--pipeline"},
		{[]string{"--rounds", "0"}, "--rounds"},
		{[]string{"--phase-seconds", "0"}, "--phase-seconds"},
		{[]string{"--bytes", "-1mb"}, "--bytes"},
		{[]string{"4mb"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseCompareFlags(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestWorkingSetFitsInAQuarterOfMaxmemory(t *testing.T) {
	tests := []struct {
		size           int64
		conns, keysPer int
		want           int
	}{
		{4 << 10, 8, 4, 32},   // small values: keysPer per connection
		{32 << 20, 64, 4, 32}, // 64 x 4 x 32 MiB would be 8 GiB: capped at 1 GiB
		{8 << 30, 1, 4, 1},    // larger than the budget: still one key
	}
	for _, tt := range tests {
		got := workingSetKeys(tt.size, tt.conns, tt.keysPer, 4<<30)
		if got != tt.want {
			t.Errorf("workingSetKeys(%d, %d, %d) = %d, want %d", tt.size, tt.conns, tt.keysPer, got, tt.want)
		}
	}
}

func TestPhaseKeysCoverTheWorkingSet(t *testing.T) {
	for _, tt := range []struct{ conns, keys, pipeline int }{{8, 32, 1}, {8, 32, 16}, {64, 32, 1}, {1, 4, 16}, {3, 7, 2}} {
		seen := map[int]bool{}
		for i := 0; i < tt.conns; i++ {
			for j := 0; j < tt.pipeline*((tt.keys+tt.conns-1)/tt.conns); j++ {
				seen[phaseKey(i, j, tt.conns, tt.keys)] = true
			}
		}
		if len(seen) != tt.keys {
			t.Errorf("conns %d, keys %d: first batch touches %d keys, want all", tt.conns, tt.keys, len(seen))
		}
	}
}

func TestBatchesPerConn(t *testing.T) {
	tests := []struct {
		maxBytes, size  int64
		conns, pipeline int
		want            int
	}{
		{512 << 20, 4 << 10, 8, 1, 16384},
		{512 << 20, 4 << 10, 8, 16, 1024},
		{512 << 20, 32 << 20, 64, 1, 1}, // at least one request per connection
		{100, 30, 1, 1, 4},              // rounds up
	}
	for _, tt := range tests {
		if got := batchesPerConn(tt.maxBytes, tt.size, tt.conns, tt.pipeline); got != tt.want {
			t.Errorf("batchesPerConn(%d, %d, %d, %d) = %d, want %d", tt.maxBytes, tt.size, tt.conns, tt.pipeline, got, tt.want)
		}
	}
}

func TestEveryCommandAnswersHelp(t *testing.T) {
	for name, run := range commandTable() {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), []string{"--help"}, io.Discard)
			if !errors.Is(err, flag.ErrHelp) {
				t.Errorf("%s --help returned %v, want flag.ErrHelp", name, err)
			}
		})
	}
}

func TestPrintMeasurementsShowsOpsAndLoopbackShare(t *testing.T) {
	var b strings.Builder
	ms := []measurement{{Op: "SET", ValueBytes: 4096, Conns: 8, Pipeline: 16, Rounds: 3, RedisGBps: 0.5, KVGBps: 0.25,
		RedisOps: 122070, KVOps: 61035, Ratio: 0.5, LoopbackGBps: 2.5, KVOfLoopback: 0.1}}
	if err := printMeasurements(&b, ms, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pipeline", "ops/s", "122070", "61035", "0.50x", "10%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
