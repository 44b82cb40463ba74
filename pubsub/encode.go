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

// EncodeUnsubscribed appends the notice of a shard channel the server
// unsubscribed a client from, Redis's addReplyPubsubUnsubscribed:
// "sunsubscribe", the channel, and the client's shard count left.
func EncodeUnsubscribed(dst []byte, proto int, channel []byte, count int) []byte {
	if proto == 3 {
		dst = append(dst, ">3\r\n"...)
	} else {
		dst = append(dst, "*3\r\n"...)
	}
	dst = appendBulk(dst, "sunsubscribe")
	dst = appendBulk(dst, string(channel))
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(count), 10)
	return append(dst, '\r', '\n')
}

func appendBulk(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}
