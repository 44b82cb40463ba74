package server

import (
	"context"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/migrate"
)

// MIGRATE's network exchange as its handler sees it (commands.Migrator).

var _ commands.Migrator = session{}

// Migrate runs the exchange through the server's connection cache without
// Server.exclusive, which a MIGRATE on its own holds shared: an EXEC or a
// script then need not wait for a slow target. The handler read its keys
// in one engine step before and deletes in another after only those whose
// value is unchanged, so what runs in between changes no reply (the EXECs
// and scripts it now lets run are sequences of commands that could already
// run there). Inside EXEC or a script the lock stays theirs.
func (s session) Migrate(ctx context.Context, req migrate.Request) migrate.Result {
	defer s.c.leaveShared()()
	return s.c.srv.migrations.Migrate(ctx, req)
}
