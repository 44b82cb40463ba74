package main

import (
	"os"
	"testing"
)

func TestProcessRSSReadsThisProcess(t *testing.T) {
	before, err := processRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, err := processRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 48<<20 {
		t.Fatalf("RSS grew by %d bytes after touching 64 MiB", after-before)
	}
	_ = buf[len(buf)-1]
	if _, err := processRSS(-1); err == nil {
		t.Fatal("processRSS of pid -1 succeeded")
	}
}
