package commands

// The transactions family: MULTI, EXEC, DISCARD, WATCH and UNWATCH
// (Redis's multi.c). While a connection is in MULTI, dispatch queues its
// commands (answering +QUEUED, or the command's error, which flags the
// transaction so EXEC aborts with EXECABORT) except those RunsInMulti
// names, which run at once. EXEC runs the queue with no other client's
// command in between (package server holds the others off) and answers
// with the array of the queued commands' replies; a null array when a
// watched key changed since WATCH.

// transactionCommands are the transactions family's rows.
var transactionCommands = []*Spec{
	{Name: "multi", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: "@fast @transaction", Handler: cmdMulti},
	{Name: "exec", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagSkipSlowlog, ACL: "@slow @transaction", Handler: cmdExec},
	{Name: "discard", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: "@fast @transaction", Handler: cmdDiscard},
	{Name: "watch", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: "@fast @transaction",
		KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdWatch},
	{Name: "unwatch", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, ACL: "@fast @transaction", Handler: cmdUnwatch},
}

// Transaction is the connection's MULTI and WATCH state, kept by package
// server, whose dispatch queues the commands.
type Transaction interface {
	// InMulti reports whether the connection is in MULTI; Multi enters
	// it.
	InMulti() bool
	Multi()
	// InExec reports whether the command runs inside EXEC.
	InExec() bool
	// Flagged reports whether a command failed to queue, so that EXEC
	// must abort.
	Flagged() bool
	// Discard leaves MULTI, dropping the queued commands, and unwatches
	// every key.
	Discard()
	// Watch watches keys in the selected database; Unwatch forgets every
	// watched key.
	Watch(keys [][]byte)
	Unwatch()
	// WatchChanged reports whether a watched key changed since WATCH.
	WatchChanged() bool
	// Queued is the number of queued commands; RunQueued runs them in
	// order, each writing its reply.
	Queued() int
	RunQueued()
}

// RunsInMulti reports whether spec runs at once inside MULTI rather than
// being queued (Redis's processCommand exceptions).
func RunsInMulti(spec *Spec) bool {
	switch spec.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// IsExec reports whether spec is EXEC, whose rejection by dispatch aborts
// the transaction (Redis's execCommandAbort).
func IsExec(spec *Spec) bool { return spec.Name == "exec" }

// ExecAbortError is EXEC's answer when dispatch rejects it with msg inside
// MULTI.
func ExecAbortError(msg string) string {
	if len(msg) > 4 && msg[:4] == "ERR " {
		msg = msg[4:]
	}
	return "EXECABORT Transaction discarded because of: " + msg
}

func cmdMulti(x *Ctx) {
	if x.Transaction.InMulti() {
		x.W.Error("ERR MULTI calls can not be nested")
		return
	}
	x.Transaction.Multi()
	x.W.OK()
}

func cmdDiscard(x *Ctx) {
	if !x.Transaction.InMulti() {
		x.W.Error("ERR DISCARD without MULTI")
		return
	}
	x.Transaction.Discard()
	x.W.OK()
}

// cmdExec runs the queued commands, like Redis's execCommand.
func cmdExec(x *Ctx) {
	t := x.Transaction
	if !t.InMulti() {
		x.W.Error("ERR EXEC without MULTI")
		return
	}
	if t.Flagged() {
		t.Discard()
		x.W.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if t.WatchChanged() {
		t.Discard()
		x.W.NullArray()
		return
	}
	t.Unwatch()
	x.W.Array(t.Queued())
	t.RunQueued()
	t.Discard()
}

func cmdWatch(x *Ctx) {
	if x.Transaction.InMulti() {
		x.W.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	x.Transaction.Watch(x.Args[1:])
	x.W.OK()
}

func cmdUnwatch(x *Ctx) {
	x.Transaction.Unwatch()
	x.W.OK()
}
