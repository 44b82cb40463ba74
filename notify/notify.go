// Package notify is the vocabulary of Redis's keyspace notifications
// (notify.c): the event classes a notify-keyspace-events setting selects,
// their one-letter names, and the channels events are published on. The
// engine tags each event with its class; package server decides, from the
// setting, which to publish. It knows nothing of connections or keys'
// values.
package notify

import "strconv"

// Class is a set of event classes, Redis's NOTIFY_* flags.
type Class uint16

// The classes, with Redis's bit values.
const (
	Keyspace Class = 1 << 0  // K: __keyspace@<db>__:<key> channels
	Keyevent Class = 1 << 1  // E: __keyevent@<db>__:<event> channels
	Generic  Class = 1 << 2  // g: DEL, EXPIRE, RENAME, ...
	String   Class = 1 << 3  // $
	List     Class = 1 << 4  // l
	Set      Class = 1 << 5  // s
	Hash     Class = 1 << 6  // h
	ZSet     Class = 1 << 7  // z
	Expired  Class = 1 << 8  // x: a key expired
	Evicted  Class = 1 << 9  // e: a key was evicted for maxmemory
	Stream   Class = 1 << 10 // t
	KeyMiss  Class = 1 << 11 // m: a read found no key (not in A)
	Module   Class = 1 << 12 // d
	New      Class = 1 << 13 // n: a key was created (not in A)

	// All is the A alias: every class but KeyMiss and New.
	All = Generic | String | List | Set | Hash | ZSet | Expired | Evicted | Stream | Module
)

// letters are the classes in the order Redis's
// keyspaceEventsFlagsToString writes them after the A/type part.
var letters = []struct {
	c      Class
	letter byte
}{
	{Generic, 'g'}, {String, '$'}, {List, 'l'}, {Set, 's'}, {Hash, 'h'}, {ZSet, 'z'},
	{Expired, 'x'}, {Evicted, 'e'}, {Stream, 't'}, {Module, 'd'}, {New, 'n'},
}

// Parse reads a notify-keyspace-events value, Redis's
// keyspaceEventsStringToFlags; ok is false for an unknown letter.
func Parse(s string) (c Class, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			c |= All
		case 'K':
			c |= Keyspace
		case 'E':
			c |= Keyevent
		case 'm':
			c |= KeyMiss
		default:
			found := false
			for _, l := range letters {
				if l.letter == s[i] {
					c |= l.c
					found = true
					break
				}
			}
			if !found {
				return 0, false
			}
		}
	}
	return c, true
}

// String is the canonical form CONFIG GET reports, Redis's
// keyspaceEventsFlagsToString: A or the type letters in a fixed order,
// then K, E and m.
func (c Class) String() string {
	var b []byte
	if c&All == All {
		// Redis writes A alone: an n beside it is not reported.
		b = append(b, 'A')
	} else {
		for _, l := range letters {
			if c&l.c != 0 {
				b = append(b, l.letter)
			}
		}
	}
	if c&Keyspace != 0 {
		b = append(b, 'K')
	}
	if c&Keyevent != 0 {
		b = append(b, 'E')
	}
	if c&KeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// Publishes reports whether an event of class ev is published under
// setting c: its class is selected and at least one of K and E is on.
func (c Class) Publishes(ev Class) bool {
	return c&ev != 0 && c&(Keyspace|Keyevent) != 0
}

// KeyspaceChannel appends "__keyspace@<db>__:<key>".
func KeyspaceChannel(dst []byte, db int, key string) []byte {
	return appendChannel(dst, "__keyspace@", db, key)
}

// KeyeventChannel appends "__keyevent@<db>__:<event>".
func KeyeventChannel(dst []byte, db int, event string) []byte {
	return appendChannel(dst, "__keyevent@", db, event)
}

func appendChannel(dst []byte, prefix string, db int, name string) []byte {
	dst = append(dst, prefix...)
	dst = strconv.AppendInt(dst, int64(db), 10)
	dst = append(dst, "__:"...)
	return append(dst, name...)
}
