package commands

// monitorCommands is MONITOR (Redis's replication.c monitor feed): the
// connection receives every command other connections run, one line each,
// until it leaves or sends RESET.
var monitorCommands = []*Spec{
	{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdMonitor},
}

// Monitor is the server's list of monitoring connections, as the
// connection running the command sees it; package server implements it.
type Monitor interface {
	// StartMonitor makes the connection a monitor, reporting false when
	// it already is one.
	StartMonitor() bool
	// StopMonitor ends it (RESET).
	StopMonitor()
}

// cmdMonitor is Redis's monitorCommand: refused inside EXEC (a client
// there must get one reply per command), silent for a monitor already.
func cmdMonitor(x *Ctx) {
	if x.Transaction.InExec() {
		x.W.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if x.Monitor.StartMonitor() {
		x.W.OK()
	}
}
