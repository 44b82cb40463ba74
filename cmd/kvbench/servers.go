package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// target is a server under test, started by kvbench.
type target struct {
	Name string
	Addr string
	cmd  *exec.Cmd
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startProcess runs a server binary and waits until it answers PING.
func startProcess(ctx context.Context, name, bin string, args []string, port int) (*target, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	t := &target{Name: name, Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	if err := waitReady(ctx, t.Addr, 15*time.Second); err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

// Stop terminates the server and waits for it.
func (t *target) Stop() {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	t.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-done
	}
}

// startRedis starts Debian's redis-server with the same memory bound and
// persistence off.
func startRedis(ctx context.Context, bin, dir string, maxMemory string) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--maxmemory", maxMemory,
		"--maxmemory-policy", "allkeys-lru", "--daemonize", "no", "--loglevel", "warning"}
	return startProcess(ctx, "redis", bin, args, port)
}

// startKVServer starts kvserver with its data under dir.
func startKVServer(ctx context.Context, bin, dir string, maxMemory string) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--maxmemory", maxMemory, "--metrics-port", "0", "--log-level", "warn"}
	return startProcess(ctx, "kvserver", bin, args, port)
}

// buildKVServer compiles ./cmd/kvserver into dir when no binary is given.
func buildKVServer(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "kvserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/kvserver")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build kvserver (run kvbench from the repository root or pass --kvserver): %w", err)
	}
	return out, nil
}
