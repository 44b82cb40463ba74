package server

import (
	"bytes"
	"math"
	"strconv"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/glob"
)

func (s *Server) cmdDel(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		n := 0
		for _, k := range args[1:] {
			if tx.Delete(k) {
				n++
			}
		}
		c.w.Int(int64(n))
	})
}

func (s *Server) cmdUnlink(c *Client, args [][]byte) { s.cmdDel(c, args) }

func (s *Server) cmdExists(c *Client, args [][]byte) {
	lease := s.options().ExistsLeaseMs
	s.view(c, func(tx *engine.Tx) {
		n := 0
		for _, k := range args[1:] {
			if tx.Exists(k) {
				n++
				if lease > 0 {
					// A hit promises the GET that usually follows.
					tx.Lease(k, tx.Now()+lease)
				}
			}
		}
		c.w.Int(int64(n))
	})
}

func (s *Server) cmdTouch(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		n := 0
		for _, k := range args[1:] {
			if tx.Touch(k) {
				n++
			}
		}
		c.w.Int(int64(n))
	})
}

func (s *Server) cmdType(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		if _, ok := tx.Stat(args[1], true); ok {
			c.w.Simple("string")
		} else {
			c.w.Simple("none")
		}
	})
}

func (s *Server) cmdKeys(c *Client, args [][]byte) {
	pattern := args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	var keys []string
	s.view(c, func(tx *engine.Tx) {
		tx.Keys(func(k string) bool {
			if all || glob.Match(pattern, []byte(k)) {
				keys = append(keys, k)
			}
			return true
		})
	})
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

// parseCursor parses a SCAN cursor like Redis's strtoul-based parser.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true // strtoul("") is 0 and Redis accepts it
	}
	if isSpace(b[0]) {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '+':
		b = b[1:]
	case '-':
		neg = true
		b = b[1:]
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (s *Server) cmdScan(c *Client, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		c.w.Error("ERR invalid cursor")
		return
	}
	count := int64(10)
	var pattern, typeName []byte
	usePattern := false
	for i := 2; i < len(args); {
		remaining := len(args) - i
		switch {
		case equalFold(args[i], "count") && remaining >= 2:
			n, ok := parseInt64(args[i+1])
			if !ok {
				c.w.Error(errNotInteger)
				return
			}
			if n < 1 {
				c.w.Error(errSyntax)
				return
			}
			count = n
			i += 2
		case equalFold(args[i], "match") && remaining >= 2:
			pattern = args[i+1]
			usePattern = !(len(pattern) == 1 && pattern[0] == '*')
			i += 2
		case equalFold(args[i], "type") && remaining >= 2:
			typeName = args[i+1]
			i += 2
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	var keys []string
	var next uint64
	s.view(c, func(tx *engine.Tx) {
		next = tx.Scan(cursor, int(min(count, math.MaxInt32)), func(k string) {
			if usePattern && !glob.Match(pattern, []byte(k)) {
				return
			}
			if typeName != nil && !equalFold(typeName, "string") {
				return
			}
			keys = append(keys, k)
		})
	})
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

func (s *Server) cmdRandomkey(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) {
		if k, ok := tx.RandomKey(); ok {
			c.w.BulkString(k)
		} else {
			c.w.Null()
		}
	})
}

func (s *Server) cmdRename(c *Client, args [][]byte) { s.rename(c, args, false) }

func (s *Server) cmdRenamenx(c *Client, args [][]byte) { s.rename(c, args, true) }

func (s *Server) rename(c *Client, args [][]byte, nx bool) {
	src, dst := args[1], args[2]
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Peek(src)
		if !ok {
			c.w.Error("ERR no such key")
			return
		}
		if bytes.Equal(src, dst) {
			if nx {
				c.w.Int(0)
			} else {
				c.w.OK()
			}
			return
		}
		if _, exists := tx.Stat(dst, false); exists && nx {
			c.w.Int(0)
			return
		}
		tx.Delete(src)
		tx.Set(dst, e.Value, e.ExpireAt)
		if nx {
			c.w.Int(1)
		} else {
			c.w.OK()
		}
	})
}

// errIntRange is getIntFromObjectOrReply's reply for an integer outside
// the C int range.
const errIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

// parseDBIndex parses a database number like getIntFromObjectOrReply,
// returning the error reply on failure (msg replaces both errors when set,
// as SWAPDB does).
func parseDBIndex(b []byte, msg string) (int, string) {
	n, ok := parseInt64(b)
	switch {
	case !ok && msg == "":
		return 0, errNotInteger
	case !ok || n < math.MinInt32 || n > math.MaxInt32:
		if msg != "" {
			return 0, msg
		}
		return 0, errIntRange
	}
	return int(n), ""
}

func (s *Server) validDB(db int) bool { return db >= 0 && db < s.eng.Databases() }

// parseExistingDB parses a database number that must exist (SELECT, MOVE,
// COPY ... DB), returning Redis's error reply on failure.
func (s *Server) parseExistingDB(arg []byte) (int, string) {
	db, msg := parseDBIndex(arg, "")
	if msg == "" && !s.validDB(db) {
		msg = errDBIndex
	}
	return db, msg
}

func (s *Server) cmdCopy(c *Client, args [][]byte) {
	src, dst := args[1], args[2]
	srcDB := c.DB()
	dstDB := srcDB
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "db") && j < len(args)-1:
			db, msg := s.parseExistingDB(args[j+1])
			if msg != "" {
				c.w.Error(msg)
				return
			}
			dstDB = db
			j++
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	if s.ClusterEnabled() && (srcDB != 0 || dstDB != 0) {
		c.w.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if srcDB == dstDB && bytes.Equal(src, dst) {
		c.w.Error("ERR source and destination objects are the same")
		return
	}
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Get(src)
		if !ok {
			c.w.Int(0)
			return
		}
		dtx := tx.On(dstDB)
		if _, exists := dtx.Stat(dst, false); exists {
			if !replace {
				c.w.Int(0)
				return
			}
			dtx.Delete(dst)
		}
		// Values are immutable, so the copy can share the bytes.
		dtx.Set(dst, e.Value, e.ExpireAt)
		c.w.Int(1)
	})
}

func (s *Server) cmdMove(c *Client, args [][]byte) {
	if s.ClusterEnabled() {
		c.w.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	db, msg := s.parseExistingDB(args[2])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	if db == c.DB() {
		c.w.Error("ERR source and destination objects are the same")
		return
	}
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Peek(args[1])
		if !ok {
			c.w.Int(0)
			return
		}
		dtx := tx.On(db)
		if _, exists := dtx.Stat(args[1], false); exists {
			c.w.Int(0)
			return
		}
		tx.Delete(args[1])
		dtx.Set(args[1], e.Value, e.ExpireAt)
		c.w.Int(1)
	})
}

func (s *Server) cmdDbsize(c *Client, args [][]byte) {
	s.view(c, func(tx *engine.Tx) { c.w.Int(int64(tx.Len())) })
}

// flushFlagsOK checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC argument.
func flushFlagsOK(args [][]byte) bool {
	return len(args) == 1 || (len(args) == 2 && (equalFold(args[1], "sync") || equalFold(args[1], "async")))
}

func (s *Server) cmdFlushdb(c *Client, args [][]byte) {
	if !flushFlagsOK(args) {
		c.w.Error(errSyntax)
		return
	}
	s.replyOKOrError(c, s.eng.FlushDB(c.ctx, c.DB()))
}

func (s *Server) cmdFlushall(c *Client, args [][]byte) {
	if !flushFlagsOK(args) {
		c.w.Error(errSyntax)
		return
	}
	s.replyOKOrError(c, s.eng.FlushAll(c.serverCtx))
}

// expireFlags are EXPIRE's NX|XX|GT|LT options.
type expireFlags struct{ nx, xx, gt, lt bool }

func parseExpireFlags(args [][]byte) (expireFlags, string) {
	var f expireFlags
	for _, a := range args {
		switch {
		case equalFold(a, "nx"):
			f.nx = true
		case equalFold(a, "xx"):
			f.xx = true
		case equalFold(a, "gt"):
			f.gt = true
		case equalFold(a, "lt"):
			f.lt = true
		default:
			return f, "ERR Unsupported option " + string(a)
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		return f, "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f.gt && f.lt {
		return f, "ERR GT and LT options at the same time are not compatible"
	}
	return f, ""
}

func (s *Server) cmdExpire(c *Client, args [][]byte)    { s.expireGeneric(c, args, true, 1000) }
func (s *Server) cmdPexpire(c *Client, args [][]byte)   { s.expireGeneric(c, args, true, 1) }
func (s *Server) cmdExpireat(c *Client, args [][]byte)  { s.expireGeneric(c, args, false, 1000) }
func (s *Server) cmdPexpireat(c *Client, args [][]byte) { s.expireGeneric(c, args, false, 1) }

// expireGeneric implements the EXPIRE family like Redis's
// expireGenericCommand: relative commands add the current time; unit is
// 1000 for seconds, 1 for milliseconds.
func (s *Server) expireGeneric(c *Client, args [][]byte, relative bool, unit int64) {
	flags, msg := parseExpireFlags(args[3:])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	when, ok := parseInt64(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	invalid := "ERR invalid expire time in '" + string(bytes.ToLower(args[0])) + "' command"
	if unit == 1000 {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.w.Error(invalid)
			return
		}
		when *= 1000
	}
	s.update(c, func(tx *engine.Tx) {
		var base int64
		if relative {
			base = tx.Now()
		}
		if when > math.MaxInt64-base {
			c.w.Error(invalid)
			return
		}
		at := when + base
		e, ok := tx.Stat(args[1], false)
		if !ok {
			c.w.Int(0)
			return
		}
		cur := e.ExpireAt // 0 = none
		switch {
		case flags.nx && cur != 0,
			flags.xx && cur == 0,
			flags.gt && (cur == 0 || at <= cur),
			flags.lt && cur != 0 && at >= cur:
			c.w.Int(0)
			return
		}
		if at <= tx.Now() {
			tx.Delete(args[1])
		} else {
			tx.SetExpire(args[1], at)
		}
		c.w.Int(1)
	})
}

func (s *Server) cmdTtl(c *Client, args [][]byte)         { s.ttlGeneric(c, args[1], false, false) }
func (s *Server) cmdPttl(c *Client, args [][]byte)        { s.ttlGeneric(c, args[1], true, false) }
func (s *Server) cmdExpiretime(c *Client, args [][]byte)  { s.ttlGeneric(c, args[1], false, true) }
func (s *Server) cmdPexpiretime(c *Client, args [][]byte) { s.ttlGeneric(c, args[1], true, true) }

// ttlGeneric answers TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a
// missing key, -1 for a key without expiry.
func (s *Server) ttlGeneric(c *Client, key []byte, ms, absolute bool) {
	s.view(c, func(tx *engine.Tx) {
		e, ok := tx.Stat(key, true)
		switch {
		case !ok:
			c.w.Int(-2)
		case e.ExpireAt == 0:
			c.w.Int(-1)
		case absolute && ms:
			c.w.Int(e.ExpireAt)
		case absolute:
			c.w.Int(e.ExpireAt / 1000)
		default:
			ttl := max(e.ExpireAt-tx.Now(), 0)
			if ms {
				c.w.Int(ttl)
			} else {
				c.w.Int((ttl + 500) / 1000)
			}
		}
	})
}

func (s *Server) cmdPersist(c *Client, args [][]byte) {
	s.update(c, func(tx *engine.Tx) {
		e, ok := tx.Stat(args[1], false)
		if !ok || e.ExpireAt == 0 {
			c.w.Int(0)
			return
		}
		tx.SetExpire(args[1], 0)
		c.w.Int(1)
	})
}

func (s *Server) cmdSelect(c *Client, args [][]byte) {
	if s.ClusterEnabled() {
		// Redis parses the number first, then refuses any but 0.
		if db, msg := parseDBIndex(args[1], ""); msg == "" && db != 0 {
			c.w.Error("ERR SELECT is not allowed in cluster mode")
			return
		}
	}
	db, msg := s.parseExistingDB(args[1])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.setDB(db)
	c.w.OK()
}

func (s *Server) cmdSwapdb(c *Client, args [][]byte) {
	if s.ClusterEnabled() {
		c.w.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, msg := parseDBIndex(args[1], "ERR invalid first DB index")
	if msg != "" {
		c.w.Error(msg)
		return
	}
	b, msg := parseDBIndex(args[2], "ERR invalid second DB index")
	if msg != "" {
		c.w.Error(msg)
		return
	}
	if !s.validDB(a) || !s.validDB(b) {
		c.w.Error(errDBIndex)
		return
	}
	s.replyOKOrError(c, s.eng.SwapDB(c.serverCtx, a, b))
}

// replyOKOrError answers +OK, or the error of a failed storage operation.
func (s *Server) replyOKOrError(c *Client, err error) {
	if err != nil {
		s.log.Error("storage operation failed", "client", c.ID, "err", err)
		c.w.Error("ERR " + err.Error())
		return
	}
	c.w.OK()
}
