package commands

import (
	"math"
	"math/rand/v2"
	"strings"
)

// LOLWUT, as Redis 7.0 answers it: without VERSION, or with a version
// other than 5 and 6, the line "Redis ver. 7.0.15"; VERSION 5 draws Georg
// Nees's Schotter in Braille characters, VERSION 6 a city skyline in the
// terminal's four grays. Both pieces are random below their first rows,
// as Redis's are, so only their shape can be compared with Redis's.

// cmdLolwut implements LOLWUT [VERSION version] [art arguments...].
func cmdLolwut(x *Ctx) {
	args := x.Args[1:]
	version := 7
	if len(args) >= 2 && strings.EqualFold(string(args[0]), "version") {
		v, ok := ParseInt64(args[1])
		if !ok {
			x.W.Error(errNotInteger)
			return
		}
		// Redis prints the version as an unsigned int and looks at
		// its first digits: 2^32+5 is 5.
		version = int(uint32(v))
		args = args[2:]
	}
	switch version {
	case 5:
		lolwutSchotter(x, args)
	case 6:
		lolwutSkyline(x, args)
	default:
		x.W.Verbatim("Redis ver. " + RedisCompatVersion + "\n")
	}
}

// lolwutArgs parses LOLWUT's optional integer arguments into defaults,
// each clamped to [1, limits[i]], and reports false (having answered the
// error) for one that is not an integer.
func lolwutArgs(x *Ctx, args [][]byte, defaults []int, limits []int) bool {
	for i := range defaults {
		if i >= len(args) {
			break
		}
		v, ok := ParseInt64(args[i])
		if !ok {
			x.W.Error(errNotInteger)
			return false
		}
		defaults[i] = int(min(max(v, 1), int64(limits[i])))
	}
	return true
}

// lolwutCanvas is a grid of pixels, each a color; drawing outside it does
// nothing and reading outside it gives 0.
type lolwutCanvas struct {
	width, height int
	pixels        []byte
}

func newLolwutCanvas(width, height int, background byte) *lolwutCanvas {
	c := &lolwutCanvas{width: width, height: height, pixels: make([]byte, width*height)}
	for i := range c.pixels {
		c.pixels[i] = background
	}
	return c
}

func (c *lolwutCanvas) set(x, y int, color byte) {
	if x >= 0 && x < c.width && y >= 0 && y < c.height {
		c.pixels[x+y*c.width] = color
	}
}

func (c *lolwutCanvas) at(x, y int) byte {
	if x < 0 || x >= c.width || y < 0 || y >= c.height {
		return 0
	}
	return c.pixels[x+y*c.width]
}

// line draws from (x0, y0) to (x1, y1) with Bresenham's algorithm.
func (c *lolwutCanvas) line(x0, y0, x1, y1 int, color byte) {
	dx, dy := abs(x1-x0), abs(y1-y0)
	stepX, stepY := 1, 1
	if x0 >= x1 {
		stepX = -1
	}
	if y0 >= y1 {
		stepY = -1
	}
	e := dx - dy
	for {
		c.set(x0, y0, color)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 > -dy {
			e -= dy
			x0 += stepX
		}
		if e2 < dx {
			e += dx
			y0 += stepY
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// square draws a square of side size centered on (cx, cy) and turned by
// angle radians: its corners lie on the circle through them, a quarter
// turn apart, starting at 45 degrees. The arithmetic keeps Redis's mix of
// float and double, so that the squares Redis does not turn land on the
// same pixels.
func (c *lolwutCanvas) square(cx, cy int, size, angle float32, color byte) {
	radius := float32(math.Round(float64(float32(float64(size) / 1.4142135623))))
	var px, py [4]int
	k := float32(math.Pi/4 + float64(angle))
	for j := range 4 {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(radius) + float64(cx)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(radius) + float64(cy)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := range 4 {
		c.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// lolwutSchotter answers LOLWUT VERSION 5 [columns] [squares per row]
// [squares per column] (66, 8 and 12 by default): rows of squares that
// turn and shift more at random the lower they are, drawn two pixels by
// four to a Braille character.
func lolwutSchotter(x *Ctx, args [][]byte) {
	opts := []int{66, 8, 12}
	if !lolwutArgs(x, args, opts, []int{1000, 200, 200}) {
		return
	}
	cols, perRow, perCol := opts[0], opts[1], opts[2]
	width := cols * 2
	padding := 0
	if width > 4 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	height := int(side*float32(perCol) + float32(padding*2))
	canvas := newLolwutCanvas(width, height, 0)
	for row := range perCol {
		for col := range perRow {
			cx := int(float32(col)*side + side/2 + float32(padding))
			cy := int(float32(row)*side + side/2 + float32(padding))
			var angle float32
			if row > 1 {
				jitter := func() float32 { return rand.Float32() / float32(perCol) * float32(row) }
				r1, r2, r3 := jitter(), jitter(), jitter()
				if rand.IntN(2) == 1 {
					r1 = -r1
				}
				if rand.IntN(2) == 1 {
					r2 = -r2
				}
				if rand.IntN(2) == 1 {
					r3 = -r3
				}
				angle = r1
				cx = int(float32(cx) + r2*side/3)
				cy = int(float32(cy) + r3*side/3)
			}
			canvas.square(cx, cy, side, angle, 1)
		}
	}
	var b strings.Builder
	for y := 0; y < canvas.height; y += 4 {
		for px := 0; px < canvas.width; px += 2 {
			b.WriteRune(braille(canvas, px, y))
		}
		if y != canvas.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + RedisCompatVersion + "\n")
	x.W.Verbatim(b.String())
}

// braille is the Braille character of the 2x4 pixels whose top left is
// (x, y): the dots 1-2-3-7 are the left column, 4-5-6-8 the right one.
func braille(c *lolwutCanvas, x, y int) rune {
	var dots rune
	for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
		if c.at(x+p[0], y+p[1]) != 0 {
			dots |= 1 << i
		}
	}
	return 0x2800 + dots
}

// lolwutSkyline answers LOLWUT VERSION 6 [columns] [rows] (80 and 20 by
// default): two layers of plain towers in the grays behind a layer of
// black towers with lit windows, each cell a space in a color escape.
func lolwutSkyline(x *Ctx, args [][]byte) {
	opts := []int{80, 20}
	if !lolwutArgs(x, args, opts, []int{1000, 1000}) {
		return
	}
	canvas := newLolwutCanvas(opts[0], opts[1], 3)
	drawSkyline(canvas)
	// The terminal's black, two grays and white, as foreground and
	// background both.
	colors := [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}
	var b strings.Builder
	for y := range canvas.height {
		for px := range canvas.width {
			b.WriteString("\x1b[" + colors[canvas.at(px, y)&3] + " \x1b[0m")
		}
		if y != canvas.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nDedicated to the 8 bit game developers of past and present.\n" +
		"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + RedisCompatVersion + "\n")
	x.W.Verbatim(b.String())
}

// tower is one building of the skyline.
type tower struct {
	left, width, height int
	windows             bool
	color               byte
}

// drawSkyline draws the light gray towers, then the dark gray ones in
// front of them, then the black ones with windows in front of all.
func drawSkyline(c *lolwutCanvas) {
	randN := rand.IntN
	for _, color := range []byte{2, 1} {
		for left := -10; left < c.width; {
			left += randN(8)
			t := tower{left: left, width: 10 + randN(9), color: color}
			if color == 2 {
				t.height = c.height/2 + randN(c.height)/2
			} else {
				t.height = c.height/2 + randN(c.height)/3
			}
			c.drawTower(t)
			if color == 2 {
				left += t.width / 2
			} else {
				left += t.width + 1
			}
		}
	}
	for left := -10; left < c.width; {
		left += randN(8)
		t := tower{left: left, width: 5 + randN(14), windows: true, color: 0}
		if t.width%4 != 0 {
			t.width += t.width % 3
		}
		t.height = c.height/3 + randN(c.height)/2
		c.drawTower(t)
		left += t.width + 5
	}
}

// drawTower draws t standing on the canvas's bottom row: its roof two
// pixels narrower on each side, and, with windows, a grid of two-pixel-wide
// windows in one of the grays away from its edges.
func (c *lolwutCanvas) drawTower(t tower) {
	bottom := c.height - 1
	top := bottom - t.height + 1
	right := t.left + t.width
	for y := bottom; y >= top; y-- {
		for px := t.left; px < right; px++ {
			if y == top && (px <= t.left+1 || px >= right-2) {
				continue
			}
			color := t.color
			if t.windows && px > t.left+1 && px < right-2 && y > top+1 && y < bottom-1 {
				relX, relY := px-(t.left+1), y-(top+1)
				if (relX/2)%2 == 1 && relY%2 == 1 {
					for color == t.color {
						color = byte(1 + rand.IntN(2))
					}
					if relX%2 == 1 {
						color = c.at(px-1, y)
					}
				}
			}
			c.set(px, y, color)
		}
	}
}
