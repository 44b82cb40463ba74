package commands

import (
	"github.com/kvserver/kvserver/pubsub"
)

// pubsubCommands are the pub/sub family (Redis's pubsub.c): SUBSCRIBE and
// friends, PUBLISH, sharded pub/sub and PUBSUB introspection.
var pubsubCommands = []*Spec{
	{Name: "subscribe", Arity: -2, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdSubscribe},
	{Name: "unsubscribe", Arity: -1, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdUnsubscribe},
	{Name: "psubscribe", Arity: -2, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPsubscribe},
	{Name: "punsubscribe", Arity: -1, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPunsubscribe},
	{Name: "publish", Arity: 3, Flags: FlagPubsub | FlagLoading | FlagStale | FlagFast, ACL: "@pubsub @fast", Handler: cmdPublish},
	{Name: "ssubscribe", Arity: -2, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow",
		KeySpecs: []KeySpec{{Flags: KeyNotKey, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdSsubscribe},
	{Name: "sunsubscribe", Arity: -1, Flags: FlagPubsub | FlagNoscript | FlagLoading | FlagStale, ACL: "@pubsub @slow",
		KeySpecs: []KeySpec{{Flags: KeyNotKey, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdSunsubscribe},
	{Name: "spublish", Arity: 3, Flags: FlagPubsub | FlagLoading | FlagStale | FlagFast, ACL: "@pubsub @fast",
		KeySpecs: []KeySpec{{Flags: KeyNotKey, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSpublish},
	{Name: "pubsub", Arity: -2, ACL: "@slow", Subcommands: []*Spec{
		{Name: "pubsub|channels", Arity: -2, Flags: FlagPubsub | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPubsubChannels},
		{Name: "pubsub|numsub", Arity: -2, Flags: FlagPubsub | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPubsubNumsub},
		{Name: "pubsub|numpat", Arity: 2, Flags: FlagPubsub | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPubsubNumpat},
		{Name: "pubsub|shardchannels", Arity: -2, Flags: FlagPubsub | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPubsubShardchannels},
		{Name: "pubsub|shardnumsub", Arity: -2, Flags: FlagPubsub | FlagLoading | FlagStale, ACL: "@pubsub @slow", Handler: cmdPubsubShardnumsub},
		{Name: "pubsub|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdPubsubHelp},
	}},
}

// PubSub is the server's subscriptions as the connection running the
// command sees them; package server implements it over a pubsub.Hub.
type PubSub interface {
	// Subscribe and Unsubscribe change the connection's subscriptions
	// and return its count afterwards (channels and patterns, or shard
	// channels).
	Subscribe(kind pubsub.Kind, name []byte) int
	Unsubscribe(kind pubsub.Kind, name []byte) int
	// UnsubscribeAll drops every subscription of kind, each with the
	// count that followed it, and returns the count left.
	UnsubscribeAll(kind pubsub.Kind) ([]pubsub.Removed, int)
	// DropSubscriptions drops them all, silently (RESET).
	DropSubscriptions()
	// Subscribed reports whether the connection has any subscription
	// (Redis's CLIENT_PUBSUB flag).
	Subscribed() bool
	// Publish delivers message and returns the number of receivers. The
	// message is encoded before it returns (receivers queue the encoded
	// bytes), so channel and message may be the command's arguments.
	Publish(kind pubsub.Kind, channel, message []byte) int
	// Channels, NumSub and NumPat are PUBSUB's introspection;
	// NumChannels is INFO's count of channels with subscribers.
	Channels(kind pubsub.Kind, pattern []byte) [][]byte
	NumSub(kind pubsub.Kind, channel []byte) int
	NumPat() int
	NumChannels(kind pubsub.Kind) int
}

// subscriptionWords are the first element of each confirmation, per kind:
// subscribe, unsubscribe.
var subscriptionWords = map[pubsub.Kind][2]string{
	pubsub.Channel: {"subscribe", "unsubscribe"},
	pubsub.Pattern: {"psubscribe", "punsubscribe"},
	pubsub.Shard:   {"ssubscribe", "sunsubscribe"},
}

// writeSubscription writes one (un)subscription confirmation, Redis's
// addReplyPubsubSubscribed and addReplyPubsubUnsubscribed: a push in
// RESP3, an array in RESP2; a nil name is the null of a mass unsubscribe
// with nothing to remove.
func writeSubscription(x *Ctx, word string, name []byte, count int) {
	x.W.Push(3)
	x.W.BulkString(word)
	if name == nil {
		x.W.Null()
	} else {
		x.W.Bulk(name)
	}
	x.W.Int(int64(count))
}

func subscribe(x *Ctx, kind pubsub.Kind) {
	word := subscriptionWords[kind][0]
	for i := 1; i < len(x.Args); i++ {
		name := x.Session.Own(i)
		writeSubscription(x, word, name, x.PubSub.Subscribe(kind, name))
	}
}

func unsubscribe(x *Ctx, kind pubsub.Kind) {
	word := subscriptionWords[kind][1]
	if len(x.Args) == 1 {
		removed, left := x.PubSub.UnsubscribeAll(kind)
		if len(removed) == 0 {
			writeSubscription(x, word, nil, left)
		}
		for _, r := range removed {
			writeSubscription(x, word, []byte(r.Name), r.Count)
		}
		return
	}
	for _, name := range x.Args[1:] {
		writeSubscription(x, word, name, x.PubSub.Unsubscribe(kind, name))
	}
}

func cmdSubscribe(x *Ctx)    { subscribe(x, pubsub.Channel) }
func cmdPsubscribe(x *Ctx)   { subscribe(x, pubsub.Pattern) }
func cmdUnsubscribe(x *Ctx)  { unsubscribe(x, pubsub.Channel) }
func cmdPunsubscribe(x *Ctx) { unsubscribe(x, pubsub.Pattern) }
func cmdSunsubscribe(x *Ctx) { unsubscribe(x, pubsub.Shard) }

// cmdSsubscribe refuses to run inside EXEC, like Redis 7.0, whose EXEC
// denies blocking to the commands it runs.
func cmdSsubscribe(x *Ctx) {
	if x.Transaction.InExec() {
		x.W.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	subscribe(x, pubsub.Shard)
}

func cmdPublish(x *Ctx) {
	x.W.Int(int64(x.PubSub.Publish(pubsub.Channel, x.Args[1], x.Args[2])))
}

func cmdSpublish(x *Ctx) {
	x.W.Int(int64(x.PubSub.Publish(pubsub.Shard, x.Args[1], x.Args[2])))
}

// pubsubSyntaxError is Redis's addReplySubcommandSyntaxError for PUBSUB.
func pubsubSyntaxError(x *Ctx) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" +
		Sanitize(Truncate(string(x.Args[1]), 128)) + "'. Try PUBSUB HELP.")
}

func channelList(x *Ctx, kind pubsub.Kind) {
	if len(x.Args) > 3 {
		pubsubSyntaxError(x)
		return
	}
	var pattern []byte
	if len(x.Args) == 3 {
		pattern = x.Args[2]
	}
	list := x.PubSub.Channels(kind, pattern)
	x.W.Array(len(list))
	for _, ch := range list {
		x.W.Bulk(ch)
	}
}

func numSub(x *Ctx, kind pubsub.Kind) {
	x.W.Array(2 * (len(x.Args) - 2))
	for _, ch := range x.Args[2:] {
		x.W.Bulk(ch)
		x.W.Int(int64(x.PubSub.NumSub(kind, ch)))
	}
}

func cmdPubsubChannels(x *Ctx)      { channelList(x, pubsub.Channel) }
func cmdPubsubShardchannels(x *Ctx) { channelList(x, pubsub.Shard) }
func cmdPubsubNumsub(x *Ctx)        { numSub(x, pubsub.Channel) }
func cmdPubsubShardnumsub(x *Ctx)   { numSub(x, pubsub.Shard) }
func cmdPubsubNumpat(x *Ctx)        { x.W.Int(int64(x.PubSub.NumPat())) }

func cmdPubsubHelp(x *Ctx) {
	writeHelp(x, "PUBSUB",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	)
}

// AllowedWhileSubscribed reports whether a RESP2 connection with
// subscriptions may run spec, Redis's processCommand rule: only the
// (un)subscribe commands, PING, QUIT and RESET.
func AllowedWhileSubscribed(spec *Spec) bool {
	switch spec.Name {
	case "subscribe", "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe", "punsubscribe",
		"ping", "quit", "reset":
		return true
	}
	return false
}

// SubscribedModeError is Redis 7.0's refusal of any other command.
func SubscribedModeError(spec *Spec) string {
	return "ERR Can't execute '" + spec.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}
