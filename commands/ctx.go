package commands

import (
	"context"
	"log/slog"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// Ctx is what a handler gets to run one command. Package server builds one
// per connection and sets Args before each command; a handler must not
// keep it, or the arguments, after it returns (Own copies one that must
// outlive the command).
type Ctx struct {
	// Args are the command's arguments, the name first.
	Args [][]byte
	// W writes the reply, in the connection's protocol.
	W *resp.Writer
	// Session is the connection's own state.
	Session Session
	// Engine is the keyspace. It is the engine itself, not the Engine
	// interface: through a concrete type the closures handlers pass to
	// View and Update, and what they capture, stay on the stack.
	Engine *engine.Engine
	// Log is the server's logger.
	Log *slog.Logger
	// Commands is the server's command table.
	Commands *Table
	// KeyspaceConfig is the server settings the keyspace family reads.
	KeyspaceConfig KeyspaceConfig
	// KVCache is the server settings and slot map the kvcache family reads.
	KVCache KVCache
	// Clients is the server's connection registry (connection.go).
	Clients Clients
	// Users is the server's ACL users (acl.go).
	Users Users
	// Cluster is the server's cluster mode (the cluster family).
	Cluster Cluster
	// Config is the server's settings, for CONFIG.
	Config Config
	// Stats are the server's counters, for INFO, SAVE and LASTSAVE.
	Stats Stats
	// Lifecycle is the server's shutdown, for SHUTDOWN and DEBUG SLEEP.
	Lifecycle Lifecycle
	// PubSub is the server's subscriptions, seen from the connection.
	PubSub PubSub
	// Transaction is the connection's MULTI and WATCH state.
	Transaction Transaction
	// Diagnostics is the server's settings and slow log, for OBJECT,
	// MEMORY and SLOWLOG.
	Diagnostics Diagnostics
	// Scripting is the server's Lua scripts and functions (scripting.go).
	Scripting Scripting
	// Settings are the server's current settings read by name (the rows
	// without a Config field in config/settings.go), such as the limits
	// that decide the encodings of small collections.
	Settings Settings
	// KeyBlocking is the server's registry of clients blocked on keys
	// (blocking.go).
	KeyBlocking KeyBlocking
	// HyperLogLog is the server setting the HyperLogLog family reads.
	HyperLogLog HyperLogLog
	// Blocker blocks the connection in a blocking command (WAIT).
	Blocker Blocker
	// Tracking is the connection's client-side caching (tracking.go).
	Tracking Tracking
	// Monitor is the server's MONITOR connections (monitor.go).
	Monitor Monitor
	// Migrator moves keys to another server (MIGRATE, migrate.go).
	Migrator Migrator
}

// Settings reads a setting's current value by name; the name must be a
// row of config/settings.go of the matching kind (config.Live).
type Settings interface {
	Int(name string) int64
	String(name string) string
	Bool(name string) bool
}

// Session is the state of the connection a command came on that data
// commands use.
type Session interface {
	// ID is the connection's CLIENT ID.
	ID() int64
	// DB is the selected database; SetDB selects another.
	DB() int
	SetDB(db int)
	// NoTouch is CLIENT NO-TOUCH: reads leave the keys' LRU order alone.
	NoTouch() bool
	// Own returns argument i in a buffer of its own, which the handler
	// may keep (store) after the command.
	Own(i int) []byte
	// Context ends when the connection closes or the server stops.
	Context() context.Context
	// ServerContext ends only when the server stops: for work that must
	// not stop halfway because the client left (FLUSHALL, SWAPDB).
	ServerContext() context.Context
	// MaxBulk is proto-max-bulk-len, the largest string a command may
	// build.
	MaxBulk() int64

	// The connection family's state (connection.go, acl.go).

	// Name is CLIENT SETNAME's name, "" for none; SetName sets it.
	Name() string
	SetName(name string)
	// SetLibName and SetLibVer are CLIENT SETINFO's attributes.
	SetLibName(v string)
	SetLibVer(v string)
	// SetReply is CLIENT REPLY (and RESET's part of it).
	SetReply(m ReplyMode)
	// SetNoEvict is CLIENT NO-EVICT; SetNoTouch is CLIENT NO-TOUCH.
	SetNoEvict(on bool)
	SetNoTouch(on bool)
	// Proto is the RESP version replies are written in; SetProto
	// switches it (HELLO).
	Proto() int
	SetProto(p int)
	// CloseAfterReply closes the connection once the reply is written.
	CloseAfterReply()
	// UserName is the ACL user the connection runs as.
	UserName() string
	// Authenticate logs the connection in as user (AUTH, HELLO AUTH),
	// reporting whether the password was right and the user enabled.
	Authenticate(user, pass []byte) bool
	// AuthRequired reports whether the connection must still
	// authenticate before running commands.
	AuthRequired() bool
	// ResetUser makes the connection the default user's again,
	// authenticated only when that user needs no password (RESET).
	ResetUser()
}

// Engine is what commands use of the storage engine beyond transactions,
// which package engine's *Engine (Ctx.Engine) provides.
type Engine interface {
	View(db int, fn func(tx *engine.Tx))
	Update(db int, fn func(tx *engine.Tx))
	Databases() int
	FlushDB(ctx context.Context, db int) error
	FlushAll(ctx context.Context) error
	SwapDB(ctx context.Context, a, b int) error
	// What INFO reports of the engine.
	MaxMemory() int64
	Stats() engine.Stats
	DBStats() []engine.DBStats
	ChunkStats() map[engine.ChunkClass]engine.ChunkCount
	Protection() engine.ProtectionStats
}

var _ Engine = (*engine.Engine)(nil)

// View runs fn against the connection's database as one atomic read step.
func (x *Ctx) View(fn func(tx *engine.Tx)) {
	noTouch := x.Session.NoTouch()
	x.Engine.View(x.Session.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(noTouch)
		tx.SetOrigin(x.PubSub)
		fn(tx)
	})
}

// Update runs fn against the connection's database as one atomic write
// step.
func (x *Ctx) Update(fn func(tx *engine.Tx)) {
	noTouch := x.Session.NoTouch()
	x.Engine.Update(x.Session.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(noTouch)
		tx.SetOrigin(x.PubSub)
		fn(tx)
	})
}

// Context ends when the connection closes or the server stops.
func (x *Ctx) Context() context.Context { return x.Session.Context() }
