package cluster

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxNodes bounds the nodes of one map (Redis recommends at most 1000).
const MaxNodes = 1000

// Range is an inclusive range of slots.
type Range struct{ Start, End int }

// String writes the range as the file does: "5" or "0-5460".
func (r Range) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	return strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
}

// Node is one server of the cluster.
type Node struct {
	// ID is 40 lower-case hex digits, the SHA-1 of Addr(): every node
	// derives the same ids from the same file.
	ID string
	// Host is the host clients are sent to (an IP literal in canonical
	// form, or a lower-case host name); Port its port.
	Host string
	Port int
	// Slots are the ranges the node serves, ascending and merged.
	Slots []Range
	// Failing marks a node that is known to be down but still holds its
	// slots (an etcd member within its grace); never set for a file.
	Failing bool
}

// Addr is host:port, with an IPv6 host in brackets.
func (n *Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// SlotCount is the number of slots the node serves.
func (n *Node) SlotCount() int {
	c := 0
	for _, r := range n.Slots {
		c += r.End - r.Start + 1
	}
	return c
}

// Map says which node serves each slot, and which node is this server. A
// Map is immutable once Load (or Parse and Locate) has returned it, so one
// can be shared by every connection and replaced as a whole on reload.
type Map struct {
	nodes []Node
	// owner is the index in nodes of each slot's node, -1 when unserved.
	owner [Slots]int16
	// self is the index of this server's node, -1 before Locate.
	self int
	// epoch is the config epoch of a map from etcd (its revision there);
	// 0 for a file, whose epochs come from node positions.
	epoch int64
}

// Load reads and parses the file at path and locates this server in it by
// its listen address (see Locate).
func Load(path, bind string, port int) (*Map, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.Locate(bind, port); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// fileNode is one entry of the file's node list.
type fileNode struct {
	Addr string `yaml:"addr"`
	// Slots is a string or integer ("0-100,200"), a list of those, or
	// empty for a node that serves nothing.
	Slots any `yaml:"slots"`
}

type file struct {
	Nodes []fileNode `yaml:"nodes"`
}

// Parse reads a slot map from YAML (see the package documentation). The
// result has no self node until Locate.
func Parse(data []byte) (*Map, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: want a nodes list")
		}
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if len(f.Nodes) == 0 {
		return nil, errors.New("no nodes")
	}
	if len(f.Nodes) > MaxNodes {
		return nil, fmt.Errorf("%d nodes: at most %d are supported", len(f.Nodes), MaxNodes)
	}
	m := &Map{nodes: make([]Node, len(f.Nodes)), self: -1}
	for i := range m.owner {
		m.owner[i] = -1
	}
	byAddr := make(map[string]int, len(f.Nodes))
	for i, fn := range f.Nodes {
		host, port, err := parseAddr(fn.Addr)
		if err != nil {
			return nil, fmt.Errorf("node %d: addr %q: %w", i+1, fn.Addr, err)
		}
		n := Node{Host: host, Port: port}
		addr := n.Addr()
		if prev, dup := byAddr[addr]; dup {
			return nil, fmt.Errorf("node %d: addr %s is also node %d", i+1, addr, prev+1)
		}
		byAddr[addr] = i
		sum := sha1.Sum([]byte(addr))
		n.ID = hex.EncodeToString(sum[:])
		m.nodes[i] = n

		ranges, err := parseSlots(fn.Slots)
		if err != nil {
			return nil, fmt.Errorf("node %d (%s): slots: %w", i+1, addr, err)
		}
		for _, r := range ranges {
			for s := r.Start; s <= r.End; s++ {
				if o := m.owner[s]; o >= 0 {
					if int(o) == i {
						return nil, fmt.Errorf("node %d (%s): slot %d is listed twice", i+1, addr, s)
					}
					return nil, fmt.Errorf("node %d (%s): slot %d is already served by node %d (%s)",
						i+1, addr, s, o+1, m.nodes[o].Addr())
				}
				m.owner[s] = int16(i)
			}
		}
	}
	// Each node's ranges, ascending and merged, from the owner table.
	for _, run := range m.Runs() {
		run.Node.Slots = append(run.Node.Slots, run.Range)
	}
	return m, nil
}

// parseAddr splits host:port and checks both: the host must be an IP
// literal or a host name (letters, digits, '.', '-', '_'), the port
// 1..65535. IP literals come back in canonical form, names in lower case.
func parseAddr(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, errors.New("want host:port")
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not in 1..65535", portStr)
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), port, nil
	}
	if host == "" || len(host) > 253 {
		return "", 0, errors.New("want a host name or IP address")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "", 0, fmt.Errorf("host %q is neither an IP address nor a host name", host)
		}
	}
	return strings.ToLower(host), port, nil
}

// parseSlots reads a node's slots value.
func parseSlots(v any) ([]Range, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case int:
		return parseSlotList(strconv.Itoa(t))
	case string:
		return parseSlotList(t)
	case []any:
		var out []Range
		for _, e := range t {
			switch e.(type) {
			case int, string:
			default:
				return nil, fmt.Errorf("list element %v (%T): want a slot or range", e, e)
			}
			r, err := parseSlots(e)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v (%T): want slots like \"0-5460,6000\"", v, v)
}

// parseSlotList reads "0-5460,6000,7000-7100"; "" is no slots.
func parseSlotList(s string) ([]Range, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Range
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		start, err := parseSlot(lo)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		end := start
		if isRange {
			if end, err = parseSlot(hi); err != nil {
				return nil, fmt.Errorf("%q: %w", part, err)
			}
			if end < start {
				return nil, fmt.Errorf("%q: range ends before it starts", part)
			}
		}
		out = append(out, Range{start, end})
	}
	return out, nil
}

// parseSlot reads one slot number, 0..16383, decimal digits only.
func parseSlot(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a slot number", s)
	}
	n, _ := strconv.Atoi(s)
	if n >= Slots {
		return 0, fmt.Errorf("slot %d is outside 0..%d", n, Slots-1)
	}
	return n, nil
}

// Nodes returns the nodes in file order. The slice is the map's own: do
// not modify it.
func (m *Map) Nodes() []Node { return m.nodes }

// Owner returns the node serving slot, false when no node does.
func (m *Map) Owner(slot int) (*Node, bool) {
	if slot < 0 || slot >= Slots || m.owner[slot] < 0 {
		return nil, false
	}
	return &m.nodes[m.owner[slot]], true
}

// Self returns this server's node, nil before Locate.
func (m *Map) Self() *Node {
	if m.self < 0 {
		return nil
	}
	return &m.nodes[m.self]
}

// SelfIndex is the position of this server's node in Nodes, -1 before
// Locate.
func (m *Map) SelfIndex() int { return m.self }

// Serves reports whether this server's node serves slot.
func (m *Map) Serves(slot int) bool {
	return m.self >= 0 && slot >= 0 && slot < Slots && int(m.owner[slot]) == m.self
}

// Assigned is the number of slots some node serves.
func (m *Map) Assigned() int {
	n := 0
	for _, o := range m.owner {
		if o >= 0 {
			n++
		}
	}
	return n
}

// SlotRun is a maximal run of consecutive slots served by one node.
type SlotRun struct {
	Range
	Node *Node
}

// Runs returns the served slots as maximal runs in slot order, the rows
// of CLUSTER SLOTS.
func (m *Map) Runs() []SlotRun {
	var out []SlotRun
	for s := 0; s < Slots; {
		o := m.owner[s]
		e := s
		for e+1 < Slots && m.owner[e+1] == o {
			e++
		}
		if o >= 0 {
			out = append(out, SlotRun{Range{s, e}, &m.nodes[o]})
		}
		s = e + 1
	}
	return out
}

// Locate finds this server's node: the one whose port is port and whose
// host is the address the server listens on. A loopback bind (127.0.0.1,
// ::1, localhost) matches any loopback host; a wildcard bind (0.0.0.0, ::,
// empty) matches loopback hosts, the addresses of this machine's
// interfaces and its host name; any other bind must equal the host. It is
// an error when no node or more than one node matches.
func (m *Map) Locate(bind string, port int) error {
	var found []int
	for i := range m.nodes {
		if m.nodes[i].Port == port && hostMatches(bind, m.nodes[i].Host) {
			found = append(found, i)
		}
	}
	list := func(idx []int) string {
		var b strings.Builder
		for j, i := range idx {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m.nodes[i].Addr())
		}
		return b.String()
	}
	switch len(found) {
	case 1:
		m.self = found[0]
		return nil
	case 0:
		all := make([]int, len(m.nodes))
		for i := range all {
			all[i] = i
		}
		return fmt.Errorf("this server (bind %s, port %d) is not one of its nodes (%s)", bind, port, list(all))
	}
	return fmt.Errorf("this server (bind %s, port %d) matches several nodes (%s)", bind, port, list(found))
}

// hostMatches reports whether a server listening on bind is reached at host.
func hostMatches(bind, host string) bool {
	bind = strings.ToLower(strings.TrimSpace(bind))
	if bind == "" || bind == "*" || isUnspecified(bind) {
		return isLoopback(host) || isLocal(host)
	}
	if isLoopback(bind) {
		return isLoopback(host)
	}
	if bip, hip := net.ParseIP(bind), net.ParseIP(host); bip != nil && hip != nil {
		return bip.Equal(hip)
	}
	return bind == host
}

func isUnspecified(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isLocal reports whether host is this machine's host name or an address
// of one of its interfaces.
func isLocal(host string) bool {
	if name, err := os.Hostname(); err == nil && strings.EqualFold(name, host) {
		return true
	}
	hip := net.ParseIP(host)
	if hip == nil {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(hip) {
			return true
		}
	}
	return false
}

// Format writes the map as a file Parse reads back to the same map (self
// aside).
func (m *Map) Format() []byte {
	var b bytes.Buffer
	b.WriteString("nodes:\n")
	for i := range m.nodes {
		n := &m.nodes[i]
		parts := make([]string, len(n.Slots))
		for j, r := range n.Slots {
			parts[j] = r.String()
		}
		fmt.Fprintf(&b, "  - addr: %s\n    slots: %s\n", strconv.Quote(n.Addr()), strconv.Quote(strings.Join(parts, ",")))
	}
	return b.Bytes()
}
