package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestHarmonicMeanIsTheRateOverAllRounds(t *testing.T) {
	// 100 MB at 100 MB/s (1 s) and 100 MB at 400 MB/s (0.25 s): 200 MB in
	// 1.25 s.
	if got := harmonicMean([]float64{100, 400}); math.Abs(got-160) > 1e-9 {
		t.Errorf("harmonicMean(100, 400) = %v, want 160", got)
	}
	if got := harmonicMean(nil); got != 0 {
		t.Errorf("harmonicMean(nil) = %v, want 0", got)
	}
	if got := harmonicMean([]float64{100, 0}); got != 0 {
		t.Errorf("harmonicMean with a zero rate = %v, want 0", got)
	}
}

// TestDiskBenchmarkRunsBothSidesInAlternatingRounds runs the real
// comparison (a real disk tier in a temp dir) on a few small values.
func TestDiskBenchmarkRunsBothSidesInAlternatingRounds(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--sizes", "256kb", "--total", "2mb", "--rounds", "2", "--dir", t.TempDir(), "--json"}
	if err := runDisk(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	var res diskResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &res); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if res.ValueBytes != 256<<10 || res.TotalBytes != 2<<20 || len(res.Rounds) != 2 {
		t.Fatalf("got %+v", res)
	}
	if res.Rounds[0].TierFirst || !res.Rounds[1].TierFirst {
		t.Errorf("rounds do not alternate: %+v", res.Rounds)
	}
	for _, f := range []float64{res.RawWriteMBps, res.PutMBps, res.RawReadMBps, res.GetMBps, res.WritePct, res.ReadPct} {
		if !(f > 0) {
			t.Errorf("a figure is not positive: %+v", res)
		}
	}
	if err := runDisk(context.Background(), []string{"--rounds", "0"}, &out); err == nil {
		t.Error("--rounds 0 accepted")
	}
}
