package server

import (
	"context"

	"github.com/kvserver/kvserver/commands"
)

// session is a Client as package commands sees it (commands.Session).
type session struct{ c *Client }

var _ commands.Session = session{}

func (s session) ID() int64     { return s.c.ID }
func (s session) DB() int       { return s.c.DB() }
func (s session) SetDB(db int)  { s.c.setDB(db) }
func (s session) NoTouch() bool { return s.c.noTouch.Load() }
func (s session) Own(i int) []byte {
	if s.c.queuedArgs != nil {
		return ownQueued(s.c.queuedArgs[i])
	}
	return s.c.cmd.Own(i)
}
func (s session) Context() context.Context       { return s.c.ctx }
func (s session) ServerContext() context.Context { return s.c.serverCtx }
func (s session) MaxBulk() int64                 { return s.c.srv.maxBulk.Load() }

// newCommandCtx builds the context c's commands run with.
func (s *Server) newCommandCtx(c *Client) *commands.Ctx {
	return &commands.Ctx{
		W:              c.w,
		Session:        session{c},
		Engine:         s.eng,
		Log:            s.log,
		Commands:       s.table,
		KeyspaceConfig: session{c},
		KVCache:        session{c},
		Clients:        session{c},
		Users:          session{c},
		Cluster:        session{c},
		Config:         session{c},
		Stats:          session{c},
		Lifecycle:      session{c},
		Transaction:    session{c},
		PubSub:         session{c},
		Diagnostics:    session{c},
		Scripting:      session{c},
		Settings:       s.settings,
		KeyBlocking:    session{c},
		HyperLogLog:    session{c},
		Blocker:        session{c},
		Tracking:       session{c},
		Monitor:        session{c},
		Migrator:       session{c},
	}
}
