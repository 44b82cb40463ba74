package config

import (
	"errors"
	"strconv"
	"strings"
)

// OutputBufferLimit is one client class of Redis's
// client-output-buffer-limit: a client whose pending output reaches Hard
// bytes, or stays at or above Soft bytes for more than SoftSeconds, is
// disconnected. 0 disables a limit.
type OutputBufferLimit struct {
	Hard, Soft, SoftSeconds int64
}

// OutputBufferLimits are the limits of Redis's three client classes.
// kvserver's clients are normal clients, or pubsub clients while they have
// subscriptions; the replica limits are kept only to report and rewrite
// them like Redis.
type OutputBufferLimits struct {
	Normal, Replica, PubSub OutputBufferLimit
}

// DefaultOutputBufferLimits are Redis's defaults: no limit for normal
// clients, 32mb hard and 8mb for 60 seconds soft for pubsub clients.
var DefaultOutputBufferLimits = OutputBufferLimits{
	Replica: OutputBufferLimit{Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
	PubSub:  OutputBufferLimit{Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60},
}

// Errors of ParseOutputBufferLimits, in Redis's words.
var (
	errObufArgs  = errors.New("Wrong number of arguments in buffer limit configuration.")
	errObufClass = errors.New("Invalid client class specified in buffer limit configuration.")
	errObufValue = errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
)

// ParseOutputBufferLimits applies a client-output-buffer-limit value to
// base, like Redis: groups of "<class> <hard> <soft> <soft-seconds>" with
// class normal, replica (or slave) or pubsub and sizes in Redis syntax
// ("64mb"); classes not named keep base's limits. The error texts are
// Redis's.
func ParseOutputBufferLimits(s string, base OutputBufferLimits) (OutputBufferLimits, error) {
	f := strings.Fields(s)
	if len(f)%4 != 0 {
		return base, errObufArgs
	}
	out := base
	for i := 0; i < len(f); i += 4 {
		var dst *OutputBufferLimit
		switch strings.ToLower(f[i]) {
		case "normal":
			dst = &out.Normal
		case "replica", "slave":
			dst = &out.Replica
		case "pubsub":
			dst = &out.PubSub
		default:
			return base, errObufClass
		}
		hard, err1 := ParseSize(f[i+1])
		soft, err2 := ParseSize(f[i+2])
		secs, err3 := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 {
			return base, errObufValue
		}
		*dst = OutputBufferLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
	}
	return out, nil
}

// String renders the limits as Redis's CONFIG GET does:
// "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60".
func (l OutputBufferLimits) String() string {
	var b strings.Builder
	for i, c := range []struct {
		name string
		lim  OutputBufferLimit
	}{{"normal", l.Normal}, {"slave", l.Replica}, {"pubsub", l.PubSub}} {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.name)
		for _, n := range []int64{c.lim.Hard, c.lim.Soft, c.lim.SoftSeconds} {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(n, 10))
		}
	}
	return b.String()
}
