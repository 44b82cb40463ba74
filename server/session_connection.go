package server

import (
	"slices"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// The connection family's view of a connection (the per-connection
// methods of commands.Session) and of the client registry
// (commands.Clients).

var _ commands.Clients = session{}

func (s session) Name() string {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.name
}

// locked runs fn with the client's mutex held: for the fields CLIENT LIST
// reads from other goroutines.
func (s session) locked(fn func(c *Client)) {
	s.c.mu.Lock()
	fn(s.c)
	s.c.mu.Unlock()
}

func (s session) SetName(name string) { s.locked(func(c *Client) { c.name = name }) }
func (s session) SetLibName(v string) { s.locked(func(c *Client) { c.libName = v }) }
func (s session) SetLibVer(v string)  { s.locked(func(c *Client) { c.libVer = v }) }
func (s session) SetNoEvict(on bool)  { s.locked(func(c *Client) { c.noEvict = on }) }
func (s session) SetNoTouch(on bool)  { s.c.noTouch.Store(on) }
func (s session) Proto() int          { return int(s.c.proto.Load()) }
func (s session) SetProto(p int)      { s.c.setProto(p) }
func (s session) CloseAfterReply()    { s.c.closeAfterReply = true }
func (s session) UserName() string    { return s.c.user.Load().Name() }
func (s session) AuthRequired() bool  { return s.c.srv.authRequired(s.c) }
func (s session) ResetUser()          { s.c.srv.setDefaultAuth(s.c) }
func (s session) Mode() string        { return s.c.srv.redisMode() }

func (s session) Authenticate(user, pass []byte) bool {
	return s.c.srv.authenticate(s.c, user, pass)
}

// List returns the connected clients in connection order, like Redis's
// client list.
func (s session) List() []commands.ClientInfo {
	var list []*Client
	s.c.srv.forEachClient(func(c *Client) { list = append(list, c) })
	slices.SortFunc(list, func(a, b *Client) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	now := time.Now()
	infos := make([]commands.ClientInfo, len(list))
	for i, c := range list {
		infos[i] = s.clientInfo(c, now)
	}
	return infos
}

func (s session) Get(id int64) (commands.ClientInfo, bool) {
	srv := s.c.srv
	srv.clientsMu.Lock()
	c := srv.clients[id]
	srv.clientsMu.Unlock()
	if c == nil {
		return commands.ClientInfo{}, false
	}
	return s.clientInfo(c, time.Now()), true
}

func (s session) Self() commands.ClientInfo { return s.clientInfo(s.c, time.Now()) }

func (s session) Kill(id int64) {
	srv := s.c.srv
	srv.clientsMu.Lock()
	c := srv.clients[id]
	srv.clientsMu.Unlock()
	if c != nil {
		c.kill()
		// Gone for every other client when the reply says so, as Redis
		// frees a killed client at once: its own goroutine or event loop
		// ends it later (endClient, which removes it again, harmlessly).
		srv.hub.Drop(c)
		srv.removeClient(c)
	}
}

// clientInfo is c's CLIENT LIST line as seen from s's connection, the one
// running the command: only its own buffers are measured; the other
// clients' fields come from c.info, which is safe to read from any
// goroutine.
func (s session) clientInfo(c *Client, now time.Time) commands.ClientInfo {
	ci := c.info(now)
	out := commands.ClientInfo{
		ID: ci.id, Addr: ci.addr, LAddr: ci.laddr, FD: connFD(c.conn),
		Name: ci.name, Age: ci.age, Idle: ci.idle, DB: ci.db,
		LastCmd: ci.lastCmd, LibName: ci.libName, LibVer: ci.libVer,
		Proto: ci.proto, NoEvict: ci.noEvict, NoTouch: ci.noTouch,
		InMulti: ci.inMulti, Multi: ci.multiLen, MultiMem: ci.multiMem,
		User:     c.user.Load().Name(),
		Blocked:  s.c.srv.blocked.isBlocked(c.ID),
		QbufFree: idleQueryBuffer,
		Rbs:      idleReplyBuffer,
	}
	out.Sub, out.PSub, out.SSub = s.c.srv.hub.Counts(c)
	out.Tracking = s.c.srv.track.Get(c.ID)
	out.Monitor = c.monitor.Load()
	if self := s.c; c == self {
		// Its transaction as it is, not as published (publishMulti).
		out.InMulti, out.Multi, out.MultiMem = self.multi != nil, 0, 0
		if self.multi != nil {
			out.Multi, out.MultiMem = len(self.multi.cmds), self.multi.mem
		}
		// The command being run still counts as received but unprocessed,
		// as in Redis, whose query buffer holds it until it returns.
		out.Qbuf = encodedLen(self.cmd.Args) + self.r.QueryBufferUsed()
		out.QbufFree = max(self.r.QueryBufferSize()-out.Qbuf, 0)
		for _, a := range self.cmd.Args {
			out.ArgvMem += len(a)
		}
		out.Rbs = self.w.BufferCap()
		out.Rbp = out.Rbs
		out.Obl = self.w.BufferLen()
		out.Omem = self.w.QueuedBytes()
	}
	out.TotMem = out.Qbuf + out.QbufFree + out.ArgvMem + out.MultiMem + out.Rbs + out.Omem + clientOverhead
	return out
}
