package main

import (
	"image/png"
	"os"
	"path/filepath"
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
