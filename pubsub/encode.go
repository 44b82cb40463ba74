package pubsub

import "strconv"

// kindWords are the first element of each delivery, Redis's shared
// messagebulk, pmessagebulk and smessagebulk.
var kindWords = [kinds]string{Channel: "message", Pattern: "pmessage", Shard: "smessage"}

// Encode appends m as the connection receives it: a RESP2 array or, for
// proto 3, a RESP3 push ('>') of "message", channel, payload (or
// "pmessage", pattern, channel, payload), as Redis's
// addReplyPubsubMessage and addReplyPubsubPatMessage write it.
func Encode(dst []byte, proto int, m *Message) []byte {
	n := 3
	if m.Kind == Pattern {
		n = 4
	}
	if proto == 3 {
		dst = append(dst, '>')
	} else {
		dst = append(dst, '*')
	}
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, '\r', '\n')
	dst = appendBulk(dst, kindWords[m.Kind])
	if m.Kind == Pattern {
		dst = appendBulk(dst, string(m.Pattern))
	}
	dst = appendBulk(dst, string(m.Channel))
	return appendBulk(dst, string(m.Payload))
}

func appendBulk(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}
