package acl

import (
	"slices"
	"strings"
)

// categories are Redis 7.0's ACL command categories, in the order ACL CAT
// lists them. Rules may name any of them, whether or not a command of the
// catalog belongs to it (+@list is valid on a server without lists).
var categories = [...]string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// Categories returns the category names, without '@', in Redis's order.
func Categories() []string { return slices.Clone(categories[:]) }

// categoryBit returns the bit of a category name (case-insensitive).
func categoryBit(name string) (uint32, bool) {
	for i, c := range categories {
		if strings.EqualFold(c, name) {
			return 1 << i, true
		}
	}
	return 0, false
}

// Command describes one command or subcommand of the server for the rules.
type Command struct {
	// Name is the lower-case full name: "get", or "config|get" for a
	// subcommand.
	Name string
	// Categories are the ACL categories, with or without the leading '@'
	// ("@read", "fast"); unknown names are ignored.
	Categories []string
	// Subcommands of a container command such as CONFIG.
	Subcommands []Command
}

// Catalog is the set of commands rules may name, each with a small integer
// id. Build it once with NewCatalog; it is read-only afterwards and safe
// for concurrent use.
type Catalog struct {
	names  []string
	cats   []uint32
	subs   [][]int // by id: a container's subcommand ids
	byName map[string]int
	match  func(pattern, key []byte) bool
}

// NewCatalog numbers cmds and their subcommands. match decides whether a
// key matches a ~pattern (the server's glob rules); nil means exact
// comparison.
func NewCatalog(cmds []Command, match func(pattern, key []byte) bool) *Catalog {
	if match == nil {
		match = func(p, k []byte) bool { return string(p) == string(k) }
	}
	c := &Catalog{byName: make(map[string]int), match: match}
	var add func(cmd Command) int
	add = func(cmd Command) int {
		id := len(c.names)
		var bits uint32
		for _, name := range cmd.Categories {
			if b, ok := categoryBit(strings.TrimPrefix(name, "@")); ok {
				bits |= b
			}
		}
		c.names = append(c.names, strings.ToLower(cmd.Name))
		c.cats = append(c.cats, bits)
		c.subs = append(c.subs, nil)
		c.byName[c.names[id]] = id
		for _, sub := range cmd.Subcommands {
			c.subs[id] = append(c.subs[id], add(sub))
		}
		return id
	}
	for _, cmd := range cmds {
		add(cmd)
	}
	return c
}

// Len is the number of commands and subcommands.
func (c *Catalog) Len() int { return len(c.names) }

// ID returns the id of a command by full name ("config|get"),
// case-insensitively.
func (c *Catalog) ID(name string) (int, bool) {
	id, ok := c.byName[strings.ToLower(name)]
	return id, ok
}

// Name returns the full name of a command id.
func (c *Catalog) Name(id int) string { return c.names[id] }
