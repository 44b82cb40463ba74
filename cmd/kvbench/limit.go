package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// limitResult is what the machine itself allows: no server can move values
// over loopback TCP faster than one client stream can, or copy them faster
// than memcpy.
type limitResult struct {
	LoopbackGBps  float64 `json:"loopback_1stream_gbps"`
	Loopback8GBps float64 `json:"loopback_8streams_gbps"`
	MemcpyGBps    float64 `json:"memcpy_gbps"`
	WriteBytes    int     `json:"loopback_write_bytes"`
	CopyBytes     int     `json:"memcpy_buffer_bytes"`
	Seconds       float64 `json:"seconds_per_test"`
}

const (
	loopbackWrite = 1 << 20  // bytes per write() of the loopback test
	memcpyBuffer  = 64 << 20 // bytes per copy of the memcpy test
)

// runLimit measures the loopback TCP and memcpy limits of this machine.
func runLimit(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("limit", "[--seconds 2] [--json]", `
Measures what this machine allows, so that server figures can be read as a
fraction of it: loopback TCP throughput of one stream and of 8 streams
(1 MiB writes, a Go reader discarding into a reused buffer) and memcpy
throughput (a 64 MiB buffer copied repeatedly). Starts no servers.`)
	seconds := fs.Float64("seconds", 2, "duration of each loopback test (memcpy runs half as long)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *seconds <= 0 {
		return fmt.Errorf("--seconds must be positive")
	}
	res, err := measureLimits(ctx, time.Duration(*seconds*float64(time.Second)))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	_, err = fmt.Fprintf(out, "loopback TCP, 1 stream:   %6.2f GB/s\nloopback TCP, 8 streams:  %6.2f GB/s\nmemcpy (64 MiB buffer):   %6.2f GB/s\n",
		res.LoopbackGBps, res.Loopback8GBps, res.MemcpyGBps)
	return err
}

// measureLimits runs the three limit tests one after the other.
func measureLimits(ctx context.Context, d time.Duration) (limitResult, error) {
	res := limitResult{WriteBytes: loopbackWrite, CopyBytes: memcpyBuffer, Seconds: d.Seconds()}
	var err error
	if res.LoopbackGBps, err = measureLoopback(ctx, 1, loopbackWrite, d); err != nil {
		return res, err
	}
	if res.Loopback8GBps, err = measureLoopback(ctx, 8, loopbackWrite, d); err != nil {
		return res, err
	}
	res.MemcpyGBps = measureMemcpy(memcpyBuffer, d/2)
	return res, nil
}

// measureLoopback writes writeSize-byte buffers over the given number of
// loopback TCP streams for d and returns the bytes the readers received
// per second, in GB/s (10^9 bytes per second).
func measureLoopback(ctx context.Context, streams, writeSize int, d time.Duration) (float64, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("loopback listen: %w", err)
	}
	defer ln.Close()

	var wg sync.WaitGroup
	received := make([]int64, streams)
	readErrs := make(chan error, streams)
	accepted := make(chan net.Conn, streams)
	go func() {
		for range streams {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	writers := make([]net.Conn, 0, streams)
	defer func() {
		for _, c := range writers {
			c.Close()
		}
	}()
	var d0 net.Dialer
	for range streams {
		c, err := d0.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return 0, fmt.Errorf("loopback dial: %w", err)
		}
		writers = append(writers, c)
	}
	for i := range streams {
		c, ok := <-accepted
		if !ok {
			return 0, fmt.Errorf("loopback accept failed")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, writeSize)
			for {
				n, err := c.Read(buf)
				received[i] += int64(n)
				if err == io.EOF {
					return
				}
				if err != nil {
					readErrs <- err
					return
				}
			}
		}()
	}

	src := make([]byte, writeSize)
	for i := range src {
		src[i] = byte(i)
	}
	start := time.Now()
	deadline := start.Add(d)
	var ww sync.WaitGroup
	writeErrs := make(chan error, streams)
	for _, c := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if _, err := c.Write(src); err != nil {
					writeErrs <- err
					return
				}
			}
			c.(*net.TCPConn).CloseWrite()
		}()
	}
	ww.Wait()
	wg.Wait()
	elapsed := time.Since(start)
	close(writeErrs)
	close(readErrs)
	if err := <-writeErrs; err != nil {
		return 0, fmt.Errorf("loopback write: %w", err)
	}
	if err := <-readErrs; err != nil {
		return 0, fmt.Errorf("loopback read: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var total int64
	for _, n := range received {
		total += n
	}
	return float64(total) / elapsed.Seconds() / 1e9, nil
}

// measureMemcpy copies a size-byte buffer into another repeatedly for at
// least d and returns the bytes copied per second, in GB/s.
func measureMemcpy(size int, d time.Duration) float64 {
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i * 7)
	}
	copy(dst, src) // fault the pages in before timing
	var copied int64
	start := time.Now()
	for time.Since(start) < d || copied == 0 {
		copy(dst, src)
		copied += int64(size)
	}
	return float64(copied) / time.Since(start).Seconds() / 1e9
}
