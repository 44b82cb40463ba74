package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ParseSize parses a memory size the way Redis's memtoll does: a plain
// integer is a number of bytes, and an integer followed by a unit is scaled
// by it. Units are case-insensitive: b=1, k=1000, kb=1024, m=1000², mb=1024²,
// g=1000³, gb=1024³. Empty strings, signs, fractions, spaces, unknown units
// and values that overflow int64 are errors.
func ParseSize(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty size")
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits, unit := s[:i], s[i:]
	switch {
	case strings.HasPrefix(s, "-"):
		return 0, fmt.Errorf("size %q: negative sizes are not allowed", s)
	case strings.HasPrefix(unit, "."):
		return 0, fmt.Errorf("size %q: fractional sizes are not allowed", s)
	case digits == "":
		return 0, fmt.Errorf("size %q: want digits followed by an optional unit (b, k, kb, m, mb, g, gb)", s)
	}
	mul, ok := sizeUnit(unit)
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want b, k, kb, m, mb, g or gb)", s, unit)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("size %q: larger than %d bytes", s, int64(math.MaxInt64))
	}
	return n * mul, nil
}

// sizeUnit returns the multiplier of a memtoll unit; "" means bytes.
func sizeUnit(unit string) (int64, bool) {
	switch strings.ToLower(unit) {
	case "", "b":
		return 1, true
	case "k":
		return 1000, true
	case "kb":
		return 1024, true
	case "m":
		return 1000 * 1000, true
	case "mb":
		return 1024 * 1024, true
	case "g":
		return 1000 * 1000 * 1000, true
	case "gb":
		return 1024 * 1024 * 1024, true
	}
	return 0, false
}

// FormatSize renders a byte count the way Redis's bytesToHuman does for
// INFO's *_human fields: under 1024 as "<n>B", otherwise divided by the
// largest fitting power of 1024 with two decimals and the letter K, M, G, T
// or P ("1.00K", "64.00M", "1.50G"). Counts of 1024⁶ and more fall back to
// "<n>B", as in Redis. Negative counts get a leading '-', as in redis-cli.
func FormatSize(n int64) string {
	u := uint64(n)
	sign := ""
	if n < 0 {
		u = -u // two's complement magnitude, correct for math.MinInt64 too
		sign = "-"
	}
	const unit = 1024
	letters := "KMGTP"
	if u < unit {
		return sign + strconv.FormatUint(u, 10) + "B"
	}
	div := uint64(unit)
	for i := range len(letters) {
		if u < div*unit {
			return fmt.Sprintf("%s%.2f%c", sign, float64(u)/float64(div), letters[i])
		}
		div *= unit
	}
	return sign + strconv.FormatUint(u, 10) + "B"
}

// PhysicalMemory returns the machine's physical memory in bytes, the
// MemTotal line of /proc/meminfo. It fails where that file does not exist
// (non-Linux systems). It does not look at cgroup limits.
func PhysicalMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("physical memory: %w", err)
	}
	defer f.Close()
	n, err := parseMemTotal(f)
	if err != nil {
		return 0, fmt.Errorf("physical memory: /proc/meminfo: %w", err)
	}
	return n, nil
}

// parseMemTotal finds "MemTotal: <n> kB" in meminfo-formatted text and
// returns n in bytes.
func parseMemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected MemTotal line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
			return 0, fmt.Errorf("unexpected MemTotal value %q", fields[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	return 0, errors.New("no MemTotal line")
}
