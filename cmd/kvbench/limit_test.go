package main

import (
	"context"
	"testing"
	"time"
)

func TestMeasureLoopbackMovesBytes(t *testing.T) {
	for _, streams := range []int{1, 3} {
		gbps, err := measureLoopback(context.Background(), streams, 64<<10, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("%d streams: %v", streams, err)
		}
		if gbps <= 0 {
			t.Errorf("%d streams: %v GB/s, want a positive rate", streams, gbps)
		}
	}
}

func TestMeasureMemcpyCopiesAtLeastOnce(t *testing.T) {
	if gbps := measureMemcpy(1<<20, 0); gbps <= 0 {
		t.Errorf("memcpy = %v GB/s, want a positive rate even for a zero duration", gbps)
	}
}
