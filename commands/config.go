package commands

import (
	"errors"
	"strings"
	"syscall"
)

// configCommands are the CONFIG family's rows (Redis's config.c).
var configCommands = []*Spec{
	{Name: "config", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "config|resetstat", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdConfigResetstat},
		{Name: "config|rewrite", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdConfigRewrite},
		{Name: "config|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdConfigHelp},
		{Name: "config|get", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdConfigGet},
		{Name: "config|set", Arity: -4, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdConfigSet},
	}},
}

// Config is the server's settings as CONFIG sees them. Package server
// keeps the one table of parameters (the settings table joined with where
// each setting lives) behind it; CONFIG's handlers only parse and reply.
type Config interface {
	// Params returns the parameters the patterns match, in CONFIG GET's
	// order, each once: a pattern without glob characters is looked up
	// directly and reported under the name as written, a glob matches
	// names case-insensitively.
	Params(patterns [][]byte) []ConfigPair
	// SetParams sets the parameter, value pairs atomically: every parameter
	// and value is checked before any is applied. It returns the error
	// reply when one is refused, "" when all were applied.
	SetParams(pairs [][]byte) string
	// Rewrite writes the settings in effect to the config file. It
	// returns the file's path, "" when the server runs without one (and
	// then does nothing).
	Rewrite() (file string, err error)
	// ResetStat zeroes the counters INFO reports.
	ResetStat()
}

// ConfigPair is a parameter and its value, as CONFIG GET reports them.
type ConfigPair struct{ Name, Value string }

// cmdConfigGet implements CONFIG GET pattern [pattern ...].
func cmdConfigGet(x *Ctx) {
	pairs := x.Config.Params(x.Args[2:])
	x.W.Map(len(pairs))
	for _, p := range pairs {
		x.W.BulkString(p.Name)
		x.W.BulkString(p.Value)
	}
}

// cmdConfigSet implements CONFIG SET param value [param value ...]
// atomically, in Redis 7's order: unknown, immutable and duplicate
// parameters are found first, then every value is validated, and only
// then are they all applied.
func cmdConfigSet(x *Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errSyntax)
		return
	}
	if msg := x.Config.SetParams(x.Args[2:]); msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.OK()
}

// cmdConfigResetstat zeroes the counters INFO reports, like Redis's
// resetServerStats.
func cmdConfigResetstat(x *Ctx) {
	x.Config.ResetStat()
	x.W.OK()
}

func cmdConfigHelp(x *Ctx) {
	writeHelp(x, "CONFIG",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	)
}

// cmdConfigRewrite writes the settings in effect to the config file.
func cmdConfigRewrite(x *Ctx) {
	path, err := x.Config.Rewrite()
	switch {
	case path == "":
		x.W.Error("ERR The server is running without a config file")
	case err != nil:
		x.Log.Warn("CONFIG REWRITE failed", "file", path, "err", err)
		x.W.Error("ERR Rewriting config file: " + rewriteErrorText(err))
	default:
		x.Log.Info("CONFIG REWRITE executed with success", "file", path)
		x.W.OK()
	}
}

// rewriteErrorText is strerror's wording for system errors, the error
// itself otherwise.
func rewriteErrorText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		return strings.ToUpper(msg[:1]) + msg[1:]
	}
	return err.Error()
}
