// Package etcdtest runs a throwaway etcd server for tests: the installed
// binary (Debian's etcd-server, which .ci/run installs), on free loopback
// ports with a temporary data directory. It is for tests only; without an
// etcd binary the calling test is skipped.
package etcdtest

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// startTimeout bounds the wait for a fresh etcd to answer /health.
const startTimeout = 15 * time.Second

// Server is one etcd process that a test can kill and start again with
// the same data and ports.
type Server struct {
	// Endpoint is the client URL, http://127.0.0.1:<port>.
	Endpoint string

	bin  string
	args []string
	// logPath is the file that collects the process's output.
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// Start starts etcd and waits until it is healthy; it is killed when the
// test ends, and its output logged if the test failed. The test is skipped
// when no etcd binary is installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if _, statErr := exec.LookPath("/usr/bin/etcd"); statErr != nil {
			t.Skip("etcd is not installed (Debian package etcd-server; .ci/run installs it): skipping the etcd tests")
		}
		bin = "/usr/bin/etcd"
	}
	client, peer := freePort(t), freePort(t)
	for peer == client {
		peer = freePort(t)
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	dir := t.TempDir()
	s := &Server{Endpoint: clientURL, bin: bin, logPath: filepath.Join(dir, "etcd.log"), args: []string{
		"--name", "test", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "test=" + peerURL}}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("etcd output:\n%s", s.output())
		}
	})
	s.Restart(t)
	return s
}

// Restart starts the (killed) server again with its data directory and
// ports, and waits until it is healthy.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	log, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("etcd log: %v", err)
	}
	defer log.Close() // the process has its own descriptor
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	exited := make(chan struct{})
	s.exited = exited
	cmd := s.cmd
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(startTimeout)
	// A fresh etcd may accept connections before it can answer.
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get(s.Endpoint + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("etcd exited at start:\n%s", s.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not become healthy within %v: %v\n%s", startTimeout, err, s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill stops the server with SIGKILL and waits for it.
func (s *Server) Kill() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// output is what the process wrote so far.
func (s *Server) output() string {
	data, _ := os.ReadFile(s.logPath)
	return string(data)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
