package server

import (
	"math"
	"math/big"
	"strconv"

	"github.com/kvserver/kvserver/engine"
)

// Copies on the large-value paths, counted from the socket:
//   SET: 1 (kernel -> a bulk buffer of exactly the value's size, which the
//        engine then keeps; see Reader and Command.Own).
//   GET: 0 in user space (the reply references the stored slice and is
//        written with writev; see Writer.Bulk).

// expireKind says how an expiry argument is to be read.
type expireKind uint8

const (
	expireNone expireKind = iota
	expireEX              // relative seconds
	expirePX              // relative milliseconds
	expireEXAT            // absolute unix seconds
	expirePXAT            // absolute unix milliseconds
)

// stringOptions are the parsed options of SET and GETEX.
type stringOptions struct {
	nx, xx, get, keepTTL, persist bool
	expire                        expireKind
	expireArg                     []byte
}

// parseStringOptions parses SET's (forSet) or GETEX's options from args,
// following Redis's parseExtendedStringArgumentsOrReply: conflicting
// options and unknown words are a syntax error.
func parseStringOptions(args [][]byte, forSet bool) (stringOptions, bool) {
	var o stringOptions
	for j := 0; j < len(args); j++ {
		a := args[j]
		hasNext := j+1 < len(args)
		noExpire := o.expire == expireNone
		switch {
		case forSet && equalFold(a, "nx") && !o.xx:
			o.nx = true
		case forSet && equalFold(a, "xx") && !o.nx:
			o.xx = true
		case forSet && equalFold(a, "get"):
			o.get = true
		case forSet && equalFold(a, "keepttl") && !o.persist && noExpire:
			o.keepTTL = true
		case !forSet && equalFold(a, "persist") && noExpire && !o.keepTTL:
			o.persist = true
		case equalFold(a, "ex") && !o.keepTTL && !o.persist && (noExpire || o.expire == expireEX) && hasNext:
			o.expire, o.expireArg = expireEX, args[j+1]
			j++
		case equalFold(a, "px") && !o.keepTTL && !o.persist && (noExpire || o.expire == expirePX) && hasNext:
			o.expire, o.expireArg = expirePX, args[j+1]
			j++
		case equalFold(a, "exat") && !o.keepTTL && !o.persist && (noExpire || o.expire == expireEXAT) && hasNext:
			o.expire, o.expireArg = expireEXAT, args[j+1]
			j++
		case equalFold(a, "pxat") && !o.keepTTL && !o.persist && (noExpire || o.expire == expirePXAT) && hasNext:
			o.expire, o.expireArg = expirePXAT, args[j+1]
			j++
		default:
			return o, false
		}
	}
	return o, true
}

// expireAt turns an expiry argument into unix milliseconds like Redis's
// getExpireMillisecondsOrReply; it returns an error reply on failure.
func expireAt(kind expireKind, arg []byte, now int64, cmdName string) (int64, string) {
	n, ok := parseInt64(arg)
	if !ok {
		return 0, errNotInteger
	}
	invalid := "ERR invalid expire time in '" + cmdName + "' command"
	seconds := kind == expireEX || kind == expireEXAT
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		return 0, invalid
	}
	if seconds {
		n *= 1000
	}
	if kind == expireEX || kind == expirePX {
		if n > math.MaxInt64-now {
			return 0, invalid
		}
		n += now
	}
	return n, ""
}

func (s *Server) cmdGet(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		if e, ok := tx.Get(args[1]); ok {
			c.w.Bulk(e.Value)
		} else {
			c.w.Null()
		}
	})
}

func (s *Server) cmdSet(c *Client, args [][]byte) {
	o, ok := parseStringOptions(args[3:], true)
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	s.setGeneric(c, args[1], 2, o, "set", nil, nil)
}

// setGeneric implements SET and its variants. valueArg is the index of the
// value in the command; okReply and abortReply, when set, replace +OK and
// the null reply (SETNX answers :1 and :0).
func (s *Server) setGeneric(c *Client, key []byte, valueArg int, o stringOptions, name string, okReply, abortReply func()) {
	// Copy the value (when the reader did not already give it its own
	// buffer) before taking the engine lock, not while holding it.
	value := c.cmd.Own(valueArg)
	s.update(c, func(tx *engine.Tx) {
		var at int64
		if o.expire != expireNone {
			var msg string
			if at, msg = expireAt(o.expire, o.expireArg, tx.Now(), name); msg != "" {
				c.w.Error(msg)
				return
			}
		}
		var old engine.Entry
		var found bool
		if o.get {
			old, found = tx.Peek(key)
		} else {
			old, found = tx.Stat(key, false) // the old value itself is not needed
		}
		if o.get {
			if found {
				c.w.Bulk(old.Value)
			} else {
				c.w.Null()
			}
		}
		if (o.nx && found) || (o.xx && !found) {
			if o.get {
				return
			}
			if abortReply != nil {
				abortReply()
			} else {
				c.w.Null()
			}
			return
		}
		if o.keepTTL && found {
			at = old.ExpireAt
		}
		tx.Set(key, value, at)
		if o.get {
			return
		}
		if okReply != nil {
			okReply()
		} else {
			c.w.OK()
		}
	})
}

func (s *Server) cmdSetnx(c *Client, args [][]byte) {
	s.setGeneric(c, args[1], 2, stringOptions{nx: true}, "setnx",
		func() { c.w.Int(1) }, func() { c.w.Int(0) })
}

func (s *Server) cmdSetex(c *Client, args [][]byte) {
	s.setGeneric(c, args[1], 3, stringOptions{expire: expireEX, expireArg: args[2]}, "setex", nil, nil)
}

func (s *Server) cmdPsetex(c *Client, args [][]byte) {
	s.setGeneric(c, args[1], 3, stringOptions{expire: expirePX, expireArg: args[2]}, "psetex", nil, nil)
}

func (s *Server) cmdGetdel(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Get(args[1])
		if !ok {
			c.w.Null()
			return
		}
		c.w.Bulk(e.Value)
		tx.Delete(args[1])
	})
}

func (s *Server) cmdGetex(c *Client, args [][]byte) {
	o, ok := parseStringOptions(args[2:], false)
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Get(args[1])
		if !ok {
			c.w.Null()
			return
		}
		var at int64
		if o.expire != expireNone {
			var msg string
			if at, msg = expireAt(o.expire, o.expireArg, tx.Now(), "getex"); msg != "" {
				c.w.Error(msg)
				return
			}
		}
		c.w.Bulk(e.Value)
		switch {
		case o.expire != expireNone:
			tx.SetExpire(args[1], at)
		case o.persist:
			tx.SetExpire(args[1], 0)
		}
	})
}

func (s *Server) cmdGetset(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		if e, ok := tx.Get(args[1]); ok {
			c.w.Bulk(e.Value)
		} else {
			c.w.Null()
		}
		tx.Set(args[1], c.cmd.Own(2), 0)
	})
}

func (s *Server) cmdMget(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		c.w.Array(len(args) - 1)
		for _, k := range args[1:] {
			if e, ok := tx.Get(k); ok {
				c.w.Bulk(e.Value)
			} else {
				c.w.Null()
			}
		}
	})
}

func (s *Server) cmdMset(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.w.Error("ERR wrong number of arguments for 'mset' command")
		return
	}
	s.update(c, func(tx *engine.Tx) {
		for i := 1; i < len(args); i += 2 {
			tx.Set(args[i], c.cmd.Own(i+1), 0)
		}
		c.w.OK()
	})
}

func (s *Server) cmdMsetnx(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.w.Error("ERR wrong number of arguments for 'msetnx' command")
		return
	}
	s.update(c, func(tx *engine.Tx) {
		for i := 1; i < len(args); i += 2 {
			if _, ok := tx.Stat(args[i], false); ok {
				c.w.Int(0)
				return
			}
		}
		for i := 1; i < len(args); i += 2 {
			tx.Set(args[i], c.cmd.Own(i+1), 0)
		}
		c.w.Int(1)
	})
}

func (s *Server) cmdStrlen(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		e, _ := tx.Stat(args[1], true)
		c.w.Int(e.Len)
	})
}

// checkStringLength is Redis's guard against strings over
// proto-max-bulk-len.
func (s *Server) checkStringLength(size, add int64) bool {
	total := size + add
	return total <= s.maxBulk.Load() && total >= size && total >= add
}

func (s *Server) cmdAppend(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Peek(args[1])
		if !ok {
			tx.Set(args[1], c.cmd.Own(2), 0)
			c.w.Int(int64(len(args[2])))
			return
		}
		if !s.checkStringLength(int64(len(e.Value)), int64(len(args[2]))) {
			c.w.Error(errStringLimit)
			return
		}
		// Stored values are immutable (replies may still reference them),
		// so APPEND builds a new value.
		nv := make([]byte, 0, len(e.Value)+len(args[2]))
		nv = append(append(nv, e.Value...), args[2]...)
		tx.Set(args[1], nv, e.ExpireAt)
		c.w.Int(int64(len(nv)))
	})
}

func (s *Server) cmdGetrange(c *Client, args [][]byte) {
	start, ok1 := parseInt64(args[2])
	end, ok2 := parseInt64(args[3])
	if !ok1 || !ok2 {
		c.w.Error(errNotInteger)
		return
	}
	s.view(c, func(tx *engine.Tx) {
		e, _ := tx.Get(args[1])
		n := int64(len(e.Value))
		if start < 0 && end < 0 && start > end {
			c.w.BulkString("")
			return
		}
		if start < 0 {
			start += n
		}
		if end < 0 {
			end += n
		}
		start, end = max(start, 0), max(end, 0)
		if end >= n {
			end = n - 1
		}
		if start > end || n == 0 {
			c.w.BulkString("")
			return
		}
		c.w.Bulk(e.Value[start : end+1])
	})
}

func (s *Server) cmdSetrange(c *Client, args [][]byte) {
	offset, ok := parseInt64(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if offset < 0 {
		c.w.Error("ERR offset is out of range")
		return
	}
	value := args[3]
	s.update(c, func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		if len(value) == 0 {
			c.w.Int(int64(len(e.Value)))
			return
		}
		if !s.checkStringLength(offset, int64(len(value))) {
			c.w.Error(errStringLimit)
			return
		}
		n := max(int64(len(e.Value)), offset+int64(len(value)))
		nv := make([]byte, n)
		copy(nv, e.Value)
		copy(nv[offset:], value)
		var at int64
		if found {
			at = e.ExpireAt
		}
		tx.Set(args[1], nv, at)
		c.w.Int(n)
	})
}

func (s *Server) cmdIncr(c *Client, args [][]byte) { s.incrBy(c, args[1], 1) }

func (s *Server) cmdDecr(c *Client, args [][]byte) { s.incrBy(c, args[1], -1) }

func (s *Server) cmdIncrby(c *Client, args [][]byte) {
	n, ok := parseInt64(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	s.incrBy(c, args[1], n)
}

func (s *Server) cmdDecrby(c *Client, args [][]byte) {
	n, ok := parseInt64(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if n == math.MinInt64 {
		c.w.Error("ERR decrement would overflow")
		return
	}
	s.incrBy(c, args[1], -n)
}

// incrBy adds delta to the integer stored at key, keeping its TTL.
func (s *Server) incrBy(c *Client, key []byte, delta int64) {
	s.update(c, func(tx *engine.Tx) {
		e, found := tx.Peek(key)
		var cur int64
		if found {
			var ok bool
			if cur, ok = parseInt64(e.Value); !ok {
				c.w.Error(errNotInteger)
				return
			}
		}
		if (delta < 0 && cur < 0 && delta < math.MinInt64-cur) ||
			(delta > 0 && cur > 0 && delta > math.MaxInt64-cur) {
			c.w.Error(errOverflow)
			return
		}
		cur += delta
		tx.Set(key, strconv.AppendInt(nil, cur, 10), e.ExpireAt)
		c.w.Int(cur)
	})
}

func (s *Server) cmdIncrbyfloat(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		cur := new(big.Float).SetPrec(longDoublePrec)
		if found {
			v, ok := parseLongDouble(e.Value)
			if !ok {
				c.w.Error(errNotFloat)
				return
			}
			cur = v
		}
		incr, ok := parseLongDouble(args[2])
		if !ok {
			c.w.Error(errNotFloat)
			return
		}
		if cur.IsInf() || incr.IsInf() {
			c.w.Error(errNaNInf)
			return
		}
		sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(cur, incr)
		if sum.MantExp(nil) > maxLongDoubleExp {
			c.w.Error(errNaNInf)
			return
		}
		out := formatLongDouble(sum)
		tx.Set(args[1], []byte(out), e.ExpireAt)
		c.w.BulkString(out)
	})
}

// update runs fn against the client's database as one atomic write step.
func (s *Server) update(c *Client, fn func(tx *engine.Tx)) {
	s.eng.Update(c.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(c.noTouch.Load())
		fn(tx)
	})
}

// view runs fn against the client's database as one atomic read step.
func (s *Server) view(c *Client, fn func(tx *engine.Tx)) {
	s.eng.View(c.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(c.noTouch.Load())
		fn(tx)
	})
}
