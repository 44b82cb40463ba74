package main

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteChartProducesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs", "throughput.png")
	if err := writeChart(path, fixedReport().Compare, 8, 2.5, "test chart"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("chart is not a valid PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("chart is %dx%d pixels, want a readable size", b.Dx(), b.Dy())
	}
}

func TestWriteChartWithOneSizeAndNoLoopback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	ms := fixedReport().Compare[:2]
	if err := writeChart(path, ms, 8, 0, "one size"); err != nil {
		t.Fatal(err)
	}
}

func TestWriteChartNeedsMeasurementsForItsConnectionCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	if err := writeChart(path, fixedReport().Compare, 64, 2.5, "none"); err == nil {
		t.Errorf("writeChart with no 64-connection measurements succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a failed chart left a file behind")
	}
}

func TestChartPointsTakeUnpipelinedRunsInSizeOrder(t *testing.T) {
	ms := fixedReport().Compare
	ms[0], ms[2] = ms[2], ms[0] // 32 MiB before 4 KiB
	pts := chartPoints(ms, 8)
	if len(pts) != 4 {
		t.Fatalf("%d points, want the 4 unpipelined ones", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].ValueBytes < pts[i-1].ValueBytes {
			t.Errorf("points out of size order: %d after %d", pts[i].ValueBytes, pts[i-1].ValueBytes)
		}
	}
}

func TestLinearTicksUseRoundSteps(t *testing.T) {
	tests := []struct {
		max  float64
		want []string
	}{
		{2.7, []string{"0", "0.5", "1", "1.5", "2", "2.5"}},
		{1.2, []string{"0", "0.2", "0.4", "0.6", "0.8", "1", "1.2"}},
		{14, []string{"0", "2.5", "5", "7.5", "10", "12.5"}},
		{0, []string{"0"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range linearTicks(tt.max) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("linearTicks(%v) = %v, want %v", tt.max, got, tt.want)
		}
	}
}
