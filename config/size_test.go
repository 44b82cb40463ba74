package config

import (
	"math"
	"strings"
	"testing"
)

func TestParseSizeFollowsRedisMemtoll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int64
		wantErr string // substring; "" means success
	}{
		{in: "0", want: 0},
		{in: "1024", want: 1024},
		{in: "7b", want: 7},
		{in: "1k", want: 1000},
		{in: "1kb", want: 1024},
		{in: "1K", want: 1000},
		{in: "1KB", want: 1024},
		{in: "2m", want: 2_000_000},
		{in: "512mb", want: 512 << 20},
		{in: "512Mb", want: 512 << 20},
		{in: "3g", want: 3_000_000_000},
		{in: "1gb", want: 1 << 30},
		{in: "1GB", want: 1 << 30},
		{in: "007mb", want: 7 << 20},
		{in: "9223372036854775807", want: math.MaxInt64},
		{in: "", wantErr: "empty"},
		{in: "-1", wantErr: "negative"},
		{in: "-1gb", wantErr: "negative"},
		{in: "+1", wantErr: "digits"},
		{in: "1.5gb", wantErr: "fractional"},
		{in: "0.5", wantErr: "fractional"},
		{in: "gb", wantErr: "digits"},
		{in: "1tb", wantErr: "unknown unit"},
		{in: "1 gb", wantErr: "unknown unit"},
		{in: " 1", wantErr: "digits"},
		{in: "1gbx", wantErr: "unknown unit"},
		{in: "9223372036854775808", wantErr: "out of range"},
		{in: "8589934592gb", wantErr: "larger than"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseSize(%q) error %v, want %d", tt.in, err, tt.want)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("ParseSize(%q) = %d, want %d", tt.in, got, tt.want)
		case tt.wantErr != "" && err == nil:
			t.Errorf("ParseSize(%q) = %d, want an error containing %q", tt.in, got, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("ParseSize(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestFormatSizeFollowsRedisBytesToHuman(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{512, "512B"},
		{1023, "1023B"},
		{1024, "1.00K"},
		{1536, "1.50K"},
		{1 << 20, "1.00M"},
		{64 << 20, "64.00M"},
		{1<<20 - 1, "1024.00K"},
		{3 << 29, "1.50G"},
		{1 << 40, "1.00T"},
		{5 << 49, "2.50P"},
		{1 << 60, "1152921504606846976B"},
		{math.MaxInt64, "9223372036854775807B"},
		{-1024, "-1.00K"},
		{-5, "-5B"},
		{math.MinInt64, "-9223372036854775808B"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.in); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseMemTotalReadsKilobytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "linux meminfo", in: "MemTotal:       16318732 kB\nMemFree:         1000 kB\n", want: 16318732 * 1024},
		{name: "MemTotal not first", in: "Foo: 1 kB\nMemTotal: 2 kB\n", want: 2048},
		{name: "no MemTotal", in: "MemFree: 1 kB\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "unknown unit", in: "MemTotal: 2 MB\n", wantErr: true},
		{name: "not a number", in: "MemTotal: x kB\n", wantErr: true},
		{name: "zero", in: "MemTotal: 0 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseMemTotal(strings.NewReader(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: parseMemTotal = %d, %v; want %d, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPhysicalMemoryIsPositiveOnLinux(t *testing.T) {
	t.Parallel()
	n, err := PhysicalMemory()
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	if n <= 0 {
		t.Errorf("PhysicalMemory() = %d, want > 0", n)
	}
}
