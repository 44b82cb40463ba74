package main

import (
	"context"
	"flag"
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
	// Socket is the Unix socket the server also listens on, or "".
	Socket string
	cmd    *exec.Cmd
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
// socket, when set, is the Unix socket the arguments make it listen on.
func startProcess(ctx context.Context, name, bin string, args []string, port int, socket string) (*target, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	t := &target{Name: name, Addr: "127.0.0.1:" + strconv.Itoa(port), Socket: socket, cmd: cmd}
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
	return startRedisOn(ctx, bin, dir, maxMemory, "")
}

// startRedisOn is startRedis that also listens on the Unix socket at
// socket unless it is "".
func startRedisOn(ctx context.Context, bin, dir, maxMemory, socket string) (*target, error) {
	return startOnFreePort(ctx, "redis", bin, socket, func(port string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--maxmemory", maxMemory,
			"--maxmemory-policy", "allkeys-lru", "--daemonize", "no", "--loglevel", "warning"}
	})
}

// startDurableRedis starts a redis-server that persists as kvserver
// does, every write on disk within seconds: an append-only file written
// after every event loop pass and fsynced once a second (appendfsync
// everysec, Redis's recommended durable setting). It is named "redis-aof".
func startDurableRedis(ctx context.Context, bin, dir string, maxMemory string) (*target, error) {
	return startOnFreePort(ctx, "redis-aof", bin, "", func(port string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "yes", "--appendfsync", "everysec", "--dir", dir, "--maxmemory", maxMemory,
			"--maxmemory-policy", "allkeys-lru", "--daemonize", "no", "--loglevel", "warning"}
	})
}

// startOnFreePort starts bin as the server name on a free port, with the
// arguments args gives for that port, and on socket unless it is "".
func startOnFreePort(ctx context.Context, name, bin, socket string, args func(port string) []string) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startProcess(ctx, name, bin, withSocket(args(strconv.Itoa(port)), socket), port, socket)
}

// startKVServer starts kvserver with its data under dir.
func startKVServer(ctx context.Context, bin, dir string, maxMemory string) (*target, error) {
	return startKVServerOn(ctx, bin, dir, maxMemory, "")
}

// startKVServerOn is startKVServer that also listens on the Unix socket at
// socket unless it is "" (which needs a kvserver with --unixsocket).
func startKVServerOn(ctx context.Context, bin, dir, maxMemory, socket string) (*target, error) {
	return startOnFreePort(ctx, "kvserver", bin, socket, func(port string) []string {
		return []string{"--port", port, "--bind", "127.0.0.1", "--dir", dir,
			"--maxmemory", maxMemory, "--metrics-port", "0", "--log-level", "warn"}
	})
}

// withSocket adds Redis's --unixsocket option to args when socket is set;
// both servers spell it the same.
func withSocket(args []string, socket string) []string {
	if socket == "" {
		return args
	}
	return append(args, "--unixsocket", socket)
}

// workDir makes a temporary directory for a run and, when kvBin is empty,
// builds kvserver into it. The caller removes tmp.
func workDir(ctx context.Context, prefix, kvBin string) (tmp, bin string, err error) {
	tmp, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", fmt.Errorf("temp dir: %w", err)
	}
	if kvBin == "" {
		if kvBin, err = buildKVServer(ctx, tmp); err != nil {
			os.RemoveAll(tmp)
			return "", "", err
		}
	}
	return tmp, kvBin, nil
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

// serverPair is redis-server and kvserver running side by side with the
// same maxmemory, in a temporary directory that Close removes.
type serverPair struct {
	redis, kv *target
	tmp       string
	kvBin     string // the kvserver binary both servers' runs use
}

// pairOptions are the flags of the commands that compare a serverPair.
type pairOptions struct {
	maxMemory   string // of both servers, in Redis size syntax
	maxMemBytes int64  // maxMemory parsed, by parseMaxMemory
	redisBin    string
	kvBin       string // empty: build ./cmd/kvserver
	// unixSockets makes both servers listen on a Unix socket in their
	// directories as well (kvbench users); not a flag.
	unixSockets bool
}

// define defines --maxmemory, --redis-server and --kvserver in fs.
func (o *pairOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.maxMemory, "maxmemory", "4gb", "maxmemory for both servers")
	fs.StringVar(&o.redisBin, "redis-server", "redis-server", "redis-server binary")
	fs.StringVar(&o.kvBin, "kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
}

// parseMaxMemory sets maxMemBytes from --maxmemory, once fs has parsed it.
func (o *pairOptions) parseMaxMemory() error {
	n, err := parseSize("maxmemory", o.maxMemory)
	if err != nil {
		return err
	}
	o.maxMemBytes = n
	return nil
}

// start starts the pair o describes.
func (o *pairOptions) start(ctx context.Context) (*serverPair, error) {
	return startPair(ctx, o.redisBin, o.kvBin, o.maxMemory, o.unixSockets)
}

// onPair starts the pair o describes, runs measure against it and stops
// the pair.
func onPair[R any](ctx context.Context, o *pairOptions, measure func(pair *serverPair) (R, error)) (R, error) {
	pair, err := o.start(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	defer pair.Close()
	return measure(pair)
}

// startPair builds kvserver when kvBin is empty, then starts both servers,
// each also on a Unix socket in its directory when sockets is set.
func startPair(ctx context.Context, redisBin, kvBin, maxMemory string, sockets bool) (*serverPair, error) {
	if _, err := exec.LookPath(redisBin); err != nil {
		return nil, fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	tmp, kvBin, err := workDir(ctx, "kvbench-", kvBin)
	if err != nil {
		return nil, err
	}
	p := &serverPair{tmp: tmp, kvBin: kvBin}
	if err := os.MkdirAll(filepath.Join(tmp, "redis"), 0o755); err != nil {
		p.Close()
		return nil, err
	}
	socket := func(dir string) string {
		if !sockets {
			return ""
		}
		return filepath.Join(dir, "server.sock")
	}
	redisDir, kvDir := filepath.Join(tmp, "redis"), filepath.Join(tmp, "kv")
	if p.redis, err = startRedisOn(ctx, redisBin, redisDir, maxMemory, socket(redisDir)); err != nil {
		p.Close()
		return nil, err
	}
	if p.kv, err = startKVServerOn(ctx, kvBin, kvDir, maxMemory, socket(kvDir)); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// order returns the two servers in the order they run in the given round:
// redis first in even rounds, kvserver first in odd ones, so neither
// always meets a warm or a cold machine.
func (p *serverPair) order(round int) []*target {
	if round%2 == 1 {
		return []*target{p.kv, p.redis}
	}
	return []*target{p.redis, p.kv}
}

// flush empties both servers so that one configuration's values do not
// take the memory the next one needs.
func (p *serverPair) flush(ctx context.Context) error {
	for _, t := range []*target{p.redis, p.kv} {
		if err := flushAll(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// flushAll empties t.
func flushAll(ctx context.Context, t *target) error {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do("FLUSHALL"); err != nil {
		return fmt.Errorf("%s FLUSHALL: %w", t.Name, err)
	}
	return nil
}

// Close stops both servers and removes their files. Calling it again does
// nothing.
func (p *serverPair) Close() {
	if p.kv != nil {
		p.kv.Stop()
		p.kv = nil
	}
	if p.redis != nil {
		p.redis.Stop()
		p.redis = nil
	}
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
		p.tmp = ""
	}
}
