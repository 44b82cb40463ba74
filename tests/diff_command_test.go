package tests

import (
	"testing"

	"github.com/kvserver/kvserver/commands"
)

// TestDifferentialCommandTable pins every row of the command table that
// Redis 7.0.15 also has to Redis's COMMAND INFO and COMMAND DOCS, byte for
// byte in RESP2 and RESP3: name, arity, flags, key positions, ACL
// categories, tips, key specs and docs. The rows are the one source of
// these facts, so this also checks what ACL key checks, cluster routing
// and COMMAND GETKEYS derive from them. Containers are compared through
// their subcommands (their subcommand lists differ: kvserver implements
// fewer).
func TestDifferentialCommandTable(t *testing.T) {
	t.Parallel()
	var steps []step
	commands.Walk(commands.NewTable(commands.Specs()).All(), func(spec *commands.Spec) {
		if len(spec.Subcommands) > 0 || !commands.RedisHas(spec.Name) {
			return
		}
		steps = append(steps, do("COMMAND", "INFO", spec.Name), do("COMMAND", "DOCS", spec.Name))
	})
	if len(steps) < 2*100 {
		t.Fatalf("only %d rows to compare; Specs() lost families?", len(steps)/2)
	}
	runDifferential(t, []script{{name: "command table", steps: steps}})
}
