package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chartSeries is one line of the throughput chart.
type chartSeries struct {
	label  string
	server string // "redis" or "kvserver"
	op     string // "SET" or "GET"
	color  color.Color
	dashed bool
	glyph  draw.GlyphDrawer
}

// throughputSeries are the chart's lines: kvserver solid, redis dashed.
func throughputSeries() []chartSeries {
	return []chartSeries{
		{"kvserver SET", "kvserver", "SET", color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}, false, draw.CircleGlyph{}},
		{"kvserver GET", "kvserver", "GET", color.RGBA{R: 0x2c, G: 0xa0, B: 0x4c, A: 0xff}, false, draw.TriangleGlyph{}},
		{"redis SET", "redis", "SET", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, true, draw.CircleGlyph{}},
		{"redis GET", "redis", "GET", color.RGBA{R: 0xff, G: 0x8c, B: 0x00, A: 0xff}, true, draw.TriangleGlyph{}},
	}
}

// chartPoints picks the unpipelined measurements with the given
// connection count, ordered by value size.
func chartPoints(ms []measurement, conns int) []measurement {
	var out []measurement
	for _, m := range ms {
		if m.Conns == conns && m.Pipeline == 1 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b measurement) int { return int(a.ValueBytes - b.ValueBytes) })
	return out
}

// writeChart draws SET and GET throughput of both servers against value
// size (log x-axis) for one connection count, with the loopback limit as a
// horizontal line when it is known, and saves it as a PNG at path.
func writeChart(path string, ms []measurement, conns int, loopback float64, title string) error {
	pts := chartPoints(ms, conns)
	if len(pts) == 0 {
		return fmt.Errorf("chart: no unpipelined measurements with %d connections", conns)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "value size"
	p.Y.Label.Text = "throughput (GB/s)"
	p.X.Scale = plot.LogScale{}
	var sizes []int64
	maxY := loopback
	for _, m := range pts {
		if !slices.Contains(sizes, m.ValueBytes) {
			sizes = append(sizes, m.ValueBytes)
		}
		maxY = max(maxY, m.RedisGBps, m.KVGBps)
	}
	ticks := make(plot.ConstantTicks, len(sizes))
	for i, s := range sizes {
		ticks[i] = plot.Tick{Value: float64(s), Label: sizeLabel(s)}
	}
	p.X.Tick.Marker = ticks
	// Half an octave of room on both sides, so the end points are not on
	// the frame and a single size still gives a range.
	p.X.Min, p.X.Max = float64(sizes[0])/math.Sqrt2, float64(sizes[len(sizes)-1])*math.Sqrt2
	p.Y.Min, p.Y.Max = 0, maxY*1.4 // headroom for the legend
	p.Y.Tick.Marker = linearTicks(p.Y.Max)
	p.Add(plotter.NewGrid())

	for _, s := range throughputSeries() {
		xys := make(plotter.XYs, 0, len(pts))
		for _, m := range pts {
			if m.Op != s.op {
				continue
			}
			y := m.RedisGBps
			if s.server == "kvserver" {
				y = m.KVGBps
			}
			xys = append(xys, plotter.XY{X: float64(m.ValueBytes), Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("chart %s: %w", s.label, err)
		}
		line.Color, line.Width = s.color, vg.Points(1.5)
		if s.dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Color, points.Shape, points.Radius = s.color, s.glyph, vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
	}
	if loopback > 0 {
		lim, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: loopback}, {X: p.X.Max, Y: loopback}})
		if err != nil {
			return fmt.Errorf("chart loopback line: %w", err)
		}
		lim.Color, lim.Width = color.Gray{Y: 0x70}, vg.Points(1)
		lim.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(lim)
		p.Legend.Add(fmt.Sprintf("loopback TCP, 1 stream (%.1f GB/s)", loopback), lim)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(4)
	p.Legend.Padding = vg.Points(2)
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// sizeLabel writes a size the way people say it: 4 KiB, 32 MiB, 1536 B.
func sizeLabel(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.unit)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// linearTicks labels 0..max in about six round steps (0.1, 0.2, 0.25, 0.5,
// 1, 2, 2.5, 5, ... GB/s); gonum's default ticker can leave a 0-3 GB/s axis
// with only two labels.
func linearTicks(max float64) plot.ConstantTicks {
	if max <= 0 {
		return plot.ConstantTicks{{Value: 0, Label: "0"}}
	}
	step := niceStep(max / 6)
	var ticks plot.ConstantTicks
	for i := 0; float64(i)*step <= max*(1+1e-9); i++ {
		v := float64(i) * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 32)}) // 32 bits: 0.6, not 0.6000000000000001
	}
	return ticks
}

// niceStep is the smallest of 1, 2, 2.5 and 5 times a power of ten that is
// at least x.
func niceStep(x float64) float64 {
	pow := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*pow >= x*(1-1e-9) {
			return m * pow
		}
	}
	return 10 * pow
}
