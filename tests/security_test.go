package tests

// Security and client limits: ACL users (AUTH, HELLO AUTH, NOPERM), TLS,
// protected mode, rename-command, the idle timeout and output buffer
// limits. Where redis-server 7.0 can run the same configuration, the
// replies are compared with its own byte for byte.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvserver/kvserver/respclient"
)

// sha256Hex is the #<hash> form of an ACL password.
func sha256Hex(pass string) string {
	sum := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(sum[:])
}

// The users of the ACL tests, as Redis ACL rules: the same lines go into a
// redis.conf and to kvserver's --user.
var testUsers = []string{
	"alice on #" + sha256Hex("secret") + " ~cache:* +@read +@write -@dangerous",
	"bob off >pw ~* +@all",
	"carol on >c ~* +@all -config|set",
}

// skipInRedisMode skips tests whose kvserver flags redis-server lacks.
func skipInRedisMode(t *testing.T) {
	t.Helper()
	if diffAgainstRedis() {
		t.Skip("starts kvserver with its own flags; the Redis side is started from a config file here")
	}
}

// startRedisConf starts redis-server with a config file holding lines (for
// directives Redis accepts only there, such as user), persistence off.
func startRedisConf(t *testing.T, lines ...string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (%v)", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, "redis", dir, func(port int) *exec.Cmd {
		return exec.Command(bin, conf, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	})
}

// diffSteps sends the same steps on one connection to each server and
// compares the replies with the differential suite's rules.
func diffSteps(t *testing.T, ref, kv *server, steps []step) {
	t.Helper()
	sides := [2]side{{"redis", dialRaw(t, ref.Addr)}, {"kvserver", dialRaw(t, kv.Addr)}}
	for i, st := range steps {
		if st.mode == cmpClosed {
			for _, s := range sides {
				if raw, err := readWithin(s.c, 3*time.Second); !isClosed(err) {
					t.Errorf("step %d: %s did not close the connection: read %q, %v", i, s.name, raw, err)
				}
			}
			continue
		}
		var raws [2][]byte
		for j, s := range sides {
			raw, err := s.call(st.cmd)
			if err != nil {
				t.Fatalf("step %d %s: %s: %v", i, describe(st), s.name, err)
			}
			raws[j] = raw
		}
		if why := compareReplies(st, raws[0], raws[1]); why != "" {
			t.Errorf("step %d %s: %s\n  redis:    %s\n  kvserver: %s", i, describe(st), why, quoteTrunc(raws[0]), quoteTrunc(raws[1]))
		}
	}
}

// TestACLMatchesRedis runs one session through NOAUTH, WRONGPASS (wrong
// password, user off), AUTH as a user, NOPERM for commands and for keys,
// HELLO AUTH in RESP3 and RESP2, ACL WHOAMI/USERS/DRYRUN and RESET, on
// redis-server and kvserver configured with the same users, and requires
// the same replies.
func TestACLMatchesRedis(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	conf := []string{"requirepass defpw"}
	args := []string{"--requirepass", "defpw"}
	for _, u := range testUsers {
		conf = append(conf, "user "+u)
		args = append(args, "--user", u)
	}
	ref := startRedisConf(t, conf...)
	kv := startOwnedServer(t, harnessStops, args...)
	diffSteps(t, ref, kv, []step{
		do("GET", "k"),
		do("HELLO", "3"),
		do("AUTH", "wrong"),
		do("AUTH", "alice", "wrong"),
		do("AUTH", "nobody", "secret"),
		do("AUTH", "bob", "pw"), // bob is off
		do("HELLO", "3", "AUTH", "alice", "bad"),
		do("AUTH", "a", "b", "c"),
		do("AUTH", "alice", "secret"),
		do("SET", "cache:1", "v"),
		do("GET", "cache:1"),
		do("EXISTS", "cache:1", "cache:2"),
		do("GET", "other"),
		do("MSET", "cache:2", "a", "other", "b"),
		do("DEL", "cache:2", "other"),
		do("KEYS", "*"),
		do("FLUSHALL"),
		do("CONFIG", "GET", "timeout"),
		do("ACL", "WHOAMI"),
		do("CLIENT", "LIST"),
		do("PING"),
		hello("HELLO", "3", "AUTH", "carol", "c"),
		do("ACL", "WHOAMI"),
		do("CONFIG", "SET", "timeout", "0"),
		do("CONFIG", "GET", "timeout"),
		do("ACL", "USERS"),
		do("ACL", "DRYRUN", "alice", "get", "other"),
		do("ACL", "DRYRUN", "alice", "get", "cache:9"),
		do("ACL", "DRYRUN", "alice", "keys", "*"),
		do("ACL", "DRYRUN", "nobody", "get", "x"),
		do("ACL", "DRYRUN", "alice", "nosuchcommand"),
		do("ACL", "CAT", "nosuch"),
		do("CLIENT", "KILL", "USER", "nobody"),
		hello("HELLO", "2", "AUTH", "default", "defpw"),
		do("ACL", "WHOAMI"),
		do("RESET"),
		do("GET", "cache:1"),
		do("AUTH", "defpw"),
		do("DEL", "cache:1"),
	})
}

// TestACLListDescribesUsers checks ACL LIST against the lines Redis 7.0.15
// prints for the same users where kvserver writes them the same way.
func TestACLListDescribesUsers(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	args := []string{"--user", testUsers[2], "--user", testUsers[1]}
	kv := startKVServer(t, args...)
	c := dialRaw(t, kv.Addr)
	raw, err := c.Call("ACL", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseReply(raw)
	if err != nil || len(r.Elems) != 3 {
		t.Fatalf("ACL LIST = %q, %v", raw, err)
	}
	want := []string{
		"user bob off #" + sha256Hex("pw") + " ~* resetchannels +@all",
		"user carol on #" + sha256Hex("c") + " ~* resetchannels +@all -config|set",
		"user default on nopass ~* &* +@all",
	}
	for i, e := range r.Elems {
		if e.Str != want[i] {
			t.Errorf("ACL LIST line %d = %q, want %q", i, e.Str, want[i])
		}
	}
	expectReply(t, c, "$7\r\ndefault\r\n", "ACL", "WHOAMI")
	raw, _ = c.Call("ACL", "GENPASS")
	if r, err := parseReply(raw); err != nil || len(r.Str) != 64 {
		t.Errorf("ACL GENPASS = %q, want 64 hex digits", raw)
	}
	raw, _ = c.Call("CLIENT", "INFO")
	if !strings.Contains(string(raw), " user=default ") {
		t.Errorf("CLIENT INFO = %q, want user=default", raw)
	}
	expectReply(t, c, "+OK\r\n", "AUTH", "carol", "c")
	raw, _ = c.Call("CLIENT", "INFO")
	if !strings.Contains(string(raw), " user=carol ") {
		t.Errorf("CLIENT INFO after AUTH carol = %q, want user=carol", raw)
	}
}

// TestACLThroughClients logs in as an ACL user with redis-cli
// (--user/--pass), go-redis (Username/Password, HELLO AUTH in RESP2 and
// RESP3) and redis-py, and checks the errors each client reports.
func TestACLThroughClients(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	args := []string{"--user", "default off"}
	for _, u := range testUsers {
		args = append(args, "--user", u)
	}
	kv := startOwnedServer(t, harnessStops, args...)

	t.Run("redis-cli", func(t *testing.T) {
		// redis-cli prints an error reply and an empty line.
		cli := func(args ...string) string {
			t.Helper()
			return redisCLI(t, kv, "", append([]string{"--user", "alice", "--pass", "secret", "--no-auth-warning"}, args...)...)
		}
		if got := cli("SET", "cache:cli", "v"); got != "OK\n" {
			t.Errorf("SET cache:cli printed %q", got)
		}
		if got := cli("GET", "cache:cli"); got != "v\n" {
			t.Errorf("GET cache:cli printed %q", got)
		}
		if got, want := cli("GET", "secret:1"), "NOPERM this user has no permissions to access one of the keys used as arguments\n\n"; got != want {
			t.Errorf("GET secret:1 printed %q, want %q", got, want)
		}
		if got, want := cli("FLUSHALL"), "NOPERM this user has no permissions to run the 'flushall' command\n\n"; got != want {
			t.Errorf("FLUSHALL printed %q, want %q", got, want)
		}
		// default is off: without credentials nothing runs.
		if got, want := redisCLI(t, kv, "", "PING"), "NOAUTH Authentication required.\n\n"; got != want {
			t.Errorf("PING without credentials printed %q, want %q", got, want)
		}
	})

	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("go-redis RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: kv.Addr, Protocol: proto, Username: "alice", Password: "secret",
				MaxRetries: -1, DialTimeout: 5 * time.Second})
			defer rdb.Close()
			if err := rdb.Set(ctx, "cache:go", "v", 0).Err(); err != nil {
				t.Fatalf("SET as alice: %v", err)
			}
			if v, err := rdb.Get(ctx, "cache:go").Result(); err != nil || v != "v" {
				t.Errorf("GET as alice = %q, %v", v, err)
			}
			if err := rdb.Get(ctx, "other").Err(); err == nil || err.Error() != "NOPERM this user has no permissions to access one of the keys used as arguments" {
				t.Errorf("GET other as alice: %v", err)
			}
			if who, err := rdb.Do(ctx, "ACL", "WHOAMI").Result(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
				t.Errorf("ACL WHOAMI as alice = %v, %v; want NOPERM (alice lacks @slow)", who, err)
			}
			bad := redis.NewClient(&redis.Options{Addr: kv.Addr, Protocol: proto, Username: "alice", Password: "nope", MaxRetries: -1})
			defer bad.Close()
			if err := bad.Ping(ctx).Err(); err == nil || err.Error() != "WRONGPASS invalid username-password pair or user is disabled." {
				t.Errorf("PING with a wrong password: %v", err)
			}
			carol := redis.NewClient(&redis.Options{Addr: kv.Addr, Protocol: proto, Username: "carol", Password: "c", MaxRetries: -1})
			defer carol.Close()
			if who, err := carol.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != "carol" {
				t.Errorf("ACL WHOAMI as carol = %q, %v", who, err)
			}
			if err := carol.ConfigSet(ctx, "timeout", "0").Err(); err == nil || err.Error() != "NOPERM this user has no permissions to run the 'config|set' command" {
				t.Errorf("CONFIG SET as carol: %v", err)
			}
		})
	}

	t.Run("redis-py", func(t *testing.T) {
		const script = `
import sys, redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), username="alice", password="secret", socket_timeout=5)
print("set", r.set("cache:py", "v"))
print("get", r.get("cache:py"))
try:
    r.get("other")
except redis.exceptions.NoPermissionError as e:
    print("noperm", e)
try:
    redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), username="alice", password="x").ping()
except redis.exceptions.ResponseError as e:
    print("wrongpass", e)
`
		out, err := exec.Command(systemPython, "-c", script, strconv.Itoa(kv.Port)).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-py: %v\n%s", err, out)
		}
		want := "set True\nget b'v'\n" +
			"noperm this user has no permissions to access one of the keys used as arguments\n" +
			"wrongpass WRONGPASS invalid username-password pair or user is disabled.\n"
		if string(out) != want {
			t.Errorf("redis-py printed\n%s\nwant\n%s", out, want)
		}
	})
}

// TestRenameCommandMatchesRedis disables FLUSHALL, KEYS and SHUTDOWN and
// renames CONFIG and DEBUG on both servers: the old names answer as
// unknown commands, the new names work, COMMAND forgets the disabled ones.
func TestRenameCommandMatchesRedis(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	ref := startRedisConf(t, `rename-command FLUSHALL ""`, `rename-command KEYS ""`, `rename-command SHUTDOWN ""`,
		"rename-command CONFIG CONFIG_x9", "rename-command DEBUG dbg_x9")
	kv := startKVServer(t, "--rename-command", "FLUSHALL=", "--rename-command", "keys=",
		"--rename-command", "SHUTDOWN=", "--rename-command", "CONFIG=CONFIG_x9", "--rename-command", "DEBUG=dbg_x9")
	diffSteps(t, ref, kv, []step{
		do("FLUSHALL"),
		do("FLUSHALL", "ASYNC"),
		do("KEYS", "*"),
		do("SHUTDOWN", "NOSAVE"),
		do("CONFIG", "GET", "timeout"),
		do("config_x9", "GET", "timeout"),
		do("CONFIG_X9", "SET", "timeout", "0"),
		do("DEBUG", "SLEEP", "0"),
		do("COMMAND", "INFO", "flushall", "keys"),
		do("SET", "k", "v"),
		do("GET", "k"),
		do("DEL", "k"),
	})
	// Redis keeps the disabled commands' number in COMMAND COUNT's
	// difference: three fewer than without renames.
	plain := startKVServer(t)
	before := dialRaw(t, plain.Addr).Do("COMMAND", "COUNT")
	after := dialRaw(t, kv.Addr).Do("COMMAND", "COUNT")
	b, _ := parseReply(before)
	a, _ := parseReply(after)
	if b.Int-a.Int != 3 {
		t.Errorf("COMMAND COUNT %d with three commands disabled, %d without; want 3 fewer", a.Int, b.Int)
	}
}

// nonLoopbackIPv4 returns an address of this machine other than loopback,
// or "" when it has none.
func nonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String()
		}
	}
	return ""
}

// TestProtectedMode binds both servers to every interface without a
// password and connects from one of the machine's non-loopback addresses:
// both answer with the same -DENIED text and close the connection, while
// loopback clients are served. A password (or protected-mode no, set from
// loopback) lets the outside client in. Without a non-loopback address
// only the loopback half runs (server's TestProtectedModeRefuses covers the
// rule).
func TestProtectedMode(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	kv := startKVServer(t, "--bind", "0.0.0.0")
	local := dialRaw(t, kv.Addr)
	expectReply(t, local, "+PONG\r\n", "PING")
	expectReply(t, local, "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n", "CONFIG", "GET", "protected-mode")
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	remote := func(s *server) *rawClient {
		return dialRaw(t, net.JoinHostPort(ip, strconv.Itoa(s.Port)))
	}
	ref := startRedis(t, "--bind", "0.0.0.0", "--protected-mode", "yes")
	rc, kc := remote(ref), remote(kv)
	want, err := rc.Call("PING")
	if err != nil || !strings.HasPrefix(string(want), "-DENIED ") {
		t.Fatalf("redis-server from %s: %q, %v; want -DENIED", ip, want, err)
	}
	if got, err := kc.Call("PING"); err != nil || string(got) != string(want) {
		t.Errorf("kvserver from %s: %q, %v\nwant redis's %q", ip, got, err, want)
	}
	expectClosedConn(t, kc)

	expectReply(t, local, "+OK\r\n", "CONFIG", "SET", "protected-mode", "no")
	expectReply(t, remote(kv), "+PONG\r\n", "PING")

	withPass := startOwnedServer(t, harnessStops, "--bind", "0.0.0.0", "--requirepass", "pw")
	expectReply(t, remote(withPass), "-NOAUTH Authentication required.\r\n", "PING")
}

// testCerts are PEM files of a CA, a server certificate for 127.0.0.1, a
// client certificate from the same CA and one from another CA.
type testCerts struct {
	ca, serverCert, serverKey, clientCert, clientKey, rogueCert, rogueKey string
}

// genCerts writes testCerts into a temporary directory.
func genCerts(t *testing.T) testCerts {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := int64(1)
	template := func(cn string) *x509.Certificate {
		serial++
		return &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
		}
	}
	sign := func(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return cert, der
	}
	newCA := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		key := newKey()
		tmpl := template(cn)
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
		cert, der := sign(tmpl, tmpl, key, key)
		return cert, key, der
	}
	leaf := func(cn string, usage x509.ExtKeyUsage, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certDER, keyDER []byte) {
		key := newKey()
		tmpl := template(cn)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
			tmpl.DNSNames = []string{"localhost"}
		}
		_, der := sign(tmpl, ca, key, caKey)
		kd, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return der, kd
	}
	ca, caKey, caDER := newCA("kvserver test CA")
	rogueCA, rogueCAKey, _ := newCA("rogue CA")
	var c testCerts
	c.ca = write("ca.pem", "CERTIFICATE", caDER)
	der, key := leaf("kvserver", x509.ExtKeyUsageServerAuth, ca, caKey)
	c.serverCert, c.serverKey = write("server.pem", "CERTIFICATE", der), write("server.key", "PRIVATE KEY", key)
	der, key = leaf("client", x509.ExtKeyUsageClientAuth, ca, caKey)
	c.clientCert, c.clientKey = write("client.pem", "CERTIFICATE", der), write("client.key", "PRIVATE KEY", key)
	der, key = leaf("rogue", x509.ExtKeyUsageClientAuth, rogueCA, rogueCAKey)
	c.rogueCert, c.rogueKey = write("rogue.pem", "CERTIFICATE", der), write("rogue.key", "PRIVATE KEY", key)
	return c
}

// clientTLS returns a client configuration trusting the test CA that sends
// the given certificate ("" for none).
func (c testCerts) clientTLS(t *testing.T, cert, key string) *tls.Config {
	t.Helper()
	pemData, err := os.ReadFile(c.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemData)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		// Sent whatever CAs the server names as acceptable (Go's client
		// would otherwise withhold a certificate from another CA).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg
}

// dialTLS connects to addr over TLS and completes the handshake and a PING.
func dialTLS(addr string, cfg *tls.Config) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 2 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	// With TLS 1.3 a refused client certificate shows up on the first read.
	if _, err := conn.Write(encodeCommand([]string{"PING"})); err != nil {
		conn.Close()
		return nil, err
	}
	raw, _, err := respclient.NewReader(conn, 0).ReadReply(nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if string(raw) != "+PONG\r\n" {
		conn.Close()
		return nil, fmt.Errorf("PING over TLS answered %q", raw)
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// startKVUntil starts kvserver with extraArgs like startOwnedServer, but
// counts it as started once ready succeeds (a server without a plain port
// cannot answer the harness's PING).
func startKVUntil(t *testing.T, ready func() error, extraArgs ...string) *server {
	t.Helper()
	name, mkCmd, dir := kvCommand(t, extraArgs)
	port := freePort(t)
	s := &server{Name: name, Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir,
		Cmd: mkCmd(port), output: &syncBuffer{}, exited: make(chan struct{})}
	s.Cmd.Stdout, s.Cmd.Stderr = s.output, s.output
	if err := s.Cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		s.waitErr = s.Cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			t.Fatalf("%s exited: %v\n%s", name, s.waitErr, s.Output())
		default:
		}
		err := ready()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: %v\n%s", name, startTimeout, err, s.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// redisCLIErr runs redis-cli against port and returns its output and
// error (a failed TLS handshake makes it exit non-zero).
func redisCLIErr(port int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli",
		append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...).CombinedOutput()
	return string(out), err
}

// TestTLS serves clients over TLS: only TLS with --port 0, client
// certificates required by default (redis-cli --tls --cert --key
// --cacert, go-redis with a TLSConfig, raw RESP), refused without one or
// with one from another CA; tls-auth-clients no and optional; large values
// through the vectored-write path, which falls back to plain writes on a
// TLS connection.
func TestTLS(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	certs := genCerts(t)
	files := []string{"--tls-cert-file", certs.serverCert, "--tls-key-file", certs.serverKey, "--tls-ca-cert-file", certs.ca}
	withCert := certs.clientTLS(t, certs.clientCert, certs.clientKey)

	t.Run("client certificates required, no plain port", func(t *testing.T) {
		tlsPort := freePort(t)
		tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
		s := startKVUntil(t, func() error {
			c, err := dialTLS(tlsAddr, withCert)
			if err == nil {
				c.Close()
			}
			return err
		}, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--port", "0"}, files...)...)

		if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
			c.Close()
			t.Errorf("plain port %d accepted a connection with --port 0", s.Port)
		}
		conn, err := dialTLS(tlsAddr, withCert)
		if err != nil {
			t.Fatal(err)
		}
		c := newRawClient(t, conn)
		defer c.Close()
		expectReply(t, c, "*2\r\n$4\r\nport\r\n$1\r\n0\r\n", "CONFIG", "GET", "port")
		expectReply(t, c, "*2\r\n$8\r\ntls-port\r\n"+bulk(strconv.Itoa(tlsPort)), "CONFIG", "GET", "tls-port")
		expectReply(t, c, "*2\r\n$16\r\ntls-auth-clients\r\n$3\r\nyes\r\n", "CONFIG", "GET", "tls-auth-clients")
		big := string(randomBytes(7, 3<<20+5))
		expectReply(t, c, "+OK\r\n", "SET", "tls:big", big)
		expectReply(t, c, bulk(big), "GET", "tls:big")
		// Pipelined large and small replies in one batch.
		c.Send([]byte(string(encodeCommand([]string{"GET", "tls:big"})) + string(encodeCommand([]string{"PING"})) +
			string(encodeCommand([]string{"GET", "tls:big"}))))
		for i, want := range []string{bulk(big), "+PONG\r\n", bulk(big)} {
			if raw, err := c.ReadReply(); err != nil || string(raw) != want {
				t.Fatalf("pipelined reply %d: %s, %v", i, quoteTrunc(raw), err)
			}
		}

		for name, cfg := range map[string]*tls.Config{
			"no client certificate":       certs.clientTLS(t, "", ""),
			"certificate from another CA": certs.clientTLS(t, certs.rogueCert, certs.rogueKey),
		} {
			if c, err := dialTLS(tlsAddr, cfg); err == nil {
				c.Close()
				t.Errorf("%s: TLS connection accepted", name)
			}
		}

		out, err := redisCLIErr(tlsPort, "--tls", "--cert", certs.clientCert, "--key", certs.clientKey, "--cacert", certs.ca, "GET", "tls:big")
		if err != nil || out != big+"\n" {
			t.Errorf("redis-cli --tls GET tls:big: %v, %d bytes printed, want %d", err, len(out), len(big)+1)
		}
		if out, err := redisCLIErr(tlsPort, "--tls", "--cacert", certs.ca, "PING"); err == nil && strings.Contains(out, "PONG") {
			t.Errorf("redis-cli --tls without a client certificate got %q", out)
		}

		ctx := context.Background()
		for _, proto := range []int{2, 3} {
			rdb := redis.NewClient(&redis.Options{Addr: tlsAddr, Protocol: proto, TLSConfig: withCert, MaxRetries: -1})
			defer rdb.Close()
			val := randomBytes(uint64(proto), 1<<20)
			key := fmt.Sprintf("tls:go:%d", proto)
			if err := rdb.Set(ctx, key, val, 0).Err(); err != nil {
				t.Fatalf("go-redis RESP%d over TLS: SET: %v", proto, err)
			}
			if got, err := rdb.Get(ctx, key).Bytes(); err != nil || string(got) != string(val) {
				t.Errorf("go-redis RESP%d over TLS: GET: %d bytes, %v", proto, len(got), err)
			}
		}
	})

	t.Run("tls-auth-clients no, beside the plain port", func(t *testing.T) {
		tlsPort := freePort(t)
		tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
		noCert := certs.clientTLS(t, "", "")
		s := startKVUntil(t, func() error {
			c, err := dialTLS(tlsAddr, noCert)
			if err == nil {
				c.Close()
			}
			return err
		}, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "no"}, files...)...)
		expectReply(t, dialRaw(t, s.Addr), "+PONG\r\n", "PING")
		if c, err := dialTLS(s.Addr, withCert); err == nil {
			c.Close()
			t.Error("TLS on the plain port worked")
		}
		out, err := redisCLIErr(tlsPort, "--tls", "--cacert", certs.ca, "PING")
		if err != nil || out != "PONG\n" {
			t.Errorf("redis-cli --tls without a client certificate: %q, %v", out, err)
		}
	})

	t.Run("tls-auth-clients optional", func(t *testing.T) {
		tlsPort := freePort(t)
		tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
		startKVUntil(t, func() error {
			c, err := dialTLS(tlsAddr, withCert)
			if err == nil {
				c.Close()
			}
			return err
		}, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--port", "0", "--tls-auth-clients", "optional"}, files...)...)
		if c, err := dialTLS(tlsAddr, certs.clientTLS(t, "", "")); err != nil {
			t.Errorf("no certificate with optional: %v", err)
		} else {
			c.Close()
		}
		if c, err := dialTLS(tlsAddr, certs.clientTLS(t, certs.rogueCert, certs.rogueKey)); err == nil {
			c.Close()
			t.Error("a certificate from another CA was accepted with optional")
		}
	})
}

// TestIdleTimeout starts the server with --timeout 2: a silent client is
// closed after about two seconds, one that keeps talking is not.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	// A 2 s timeout against PINGs every 0.4 s: the margin absorbs a test
	// process starved for a second (-race on a loaded machine closed the
	// busy client with a 1 s timeout).
	s := startKVServer(t, "--timeout", "2")
	busy := dialRaw(t, s.Addr)
	expectReply(t, busy, "*2\r\n$7\r\ntimeout\r\n$1\r\n2\r\n", "CONFIG", "GET", "timeout")
	idle := dialRaw(t, s.Addr)
	expectReply(t, idle, "+PONG\r\n", "PING")
	for i := range 7 {
		time.Sleep(400 * time.Millisecond)
		expectReply(t, busy, "+PONG\r\n", "PING")
		if i == 0 {
			// 0.4 s idle: still connected (the read times out here).
			idle.conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := idle.rd.ReadLine(); !isTimeoutErr(err) {
				t.Fatalf("idle client after 0.4 s: %v, want it still connected", err)
			}
		}
	}
	expectClosedConnWithin(t, idle, 0)
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// expectClosedConnWithin fails unless c is closed by the server (EOF or
// reset) within d (0: closeWait); bytes sent before the close are skipped.
func expectClosedConnWithin(t *testing.T, c *rawClient, d time.Duration) int64 {
	t.Helper()
	if d == 0 {
		d = closeWait
	}
	c.conn.SetReadDeadline(time.Now().Add(d))
	n, err := io.Copy(io.Discard, c.conn)
	if err != nil && !connClosedErr(err) {
		t.Fatalf("connection not closed within %v: %v (after %d bytes)", d, err, n)
	}
	return n
}

// TestOutputBufferLimits: a reply over the hard limit closes the client
// (as redis-server does, compared); a client that stops reading a large
// reply is closed once its pending output stayed over the soft limit for
// soft-seconds, or, without limits, once it was idle for timeout; one that
// keeps reading slowly gets the whole value.
func TestOutputBufferLimits(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	big := string(randomBytes(11, 2<<20))

	t.Run("hard limit closes the client like Redis", func(t *testing.T) {
		limit := []string{"--client-output-buffer-limit", "normal 1mb 0 0"}
		ref := startRedis(t, limit...)
		kv := startKVServer(t, limit...)
		for _, s := range []*server{ref, kv} {
			c := dialRaw(t, s.Addr)
			expectReply(t, c, "+OK\r\n", "SET", "big", big)
			expectReply(t, c, "+OK\r\n", "SET", "small", big[:512<<10])
			expectReply(t, c, bulk(big[:512<<10]), "GET", "small")
			c.Send(encodeCommand([]string{"GET", "big"}))
			expectClosedConnWithin(t, c, 0)
		}
		waitForLog(t, kv, "client closed for overcoming of output buffer limits", "limit=hard")
	})

	huge := string(randomBytes(12, 32<<20))
	t.Run("soft limit closes a reader that stopped", func(t *testing.T) {
		kv := startKVServer(t, "--client-output-buffer-limit", "normal 0 1mb 1")
		c := dialRaw(t, kv.Addr)
		expectReply(t, c, "+OK\r\n", "SET", "huge", huge)
		start := time.Now()
		c.Send(encodeCommand([]string{"GET", "huge"}))
		time.Sleep(2500 * time.Millisecond) // read nothing meanwhile
		if n := expectClosedConnWithin(t, c, 0); n >= int64(len(huge)) {
			t.Errorf("read %d bytes, the whole reply; want the server to give up", n)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("closed after %v, before soft-seconds", d)
		}
		waitForLog(t, kv, "client closed for overcoming of output buffer limits", "limit=soft")
	})

	t.Run("timeout closes a reader that stopped", func(t *testing.T) {
		kv := startKVServer(t, "--timeout", "1")
		// Encoded before dialing: under -race encoding 32 MiB takes about
		// a second, which the server rightly counts as idle time.
		set := encodeCommand([]string{"SET", "huge", huge})
		c := dialRaw(t, kv.Addr)
		c.Send(set)
		if raw, err := c.ReadReply(); err != nil || string(raw) != "+OK\r\n" {
			t.Fatalf("SET huge: %q, %v", raw, err)
		}
		c.Send(encodeCommand([]string{"GET", "huge"}))
		time.Sleep(2500 * time.Millisecond)
		if n := expectClosedConnWithin(t, c, 0); n >= int64(len(huge)) {
			t.Errorf("read %d bytes, the whole reply; want the server to give up", n)
		}
	})

	t.Run("a slow reader that keeps reading gets the value", func(t *testing.T) {
		kv := startKVServer(t, "--timeout", "1")
		val := huge[:16<<20]
		set := encodeCommand([]string{"SET", "v", val}) // before dialing, as above
		c := dialRaw(t, kv.Addr)
		c.Send(set)
		if raw, err := c.ReadReply(); err != nil || string(raw) != "+OK\r\n" {
			t.Fatalf("SET v: %q, %v", raw, err)
		}
		c.Send(encodeCommand([]string{"GET", "v"}))
		want := bulk(val)
		got := make([]byte, 0, len(want))
		buf := make([]byte, 256<<10)
		c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		for len(got) < len(want) {
			n, err := c.conn.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("after %d of %d bytes: %v", len(got), len(want), err)
			}
			time.Sleep(20 * time.Millisecond) // ~12 MB/s
		}
		if string(got) != want {
			t.Error("slowly read value differs")
		}
	})

	t.Run("CONFIG SET client-output-buffer-limit", func(t *testing.T) {
		ref := startRedis(t)
		kv := startKVServer(t)
		diffSteps(t, ref, kv, []step{
			do("CONFIG", "GET", "client-output-buffer-limit"),
			do("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 10"),
			do("CONFIG", "GET", "client-output-buffer-limit"),
			do("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 2mb"),
			do("CONFIG", "SET", "client-output-buffer-limit", "foo 1 2 3"),
			do("CONFIG", "SET", "client-output-buffer-limit", "normal 1 2 x"),
			do("CONFIG", "SET", "protected-mode", "maybe"),
			do("CONFIG", "SET", "timeout", "-1"),
		})
	})
}

// waitForLog waits until the server's output has a line holding every
// part.
func waitForLog(t *testing.T, s *server, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		for _, line := range strings.Split(s.Output(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no log line with %q in:\n%s", parts, s.Output())
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
