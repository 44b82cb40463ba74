package server

import "github.com/kvserver/kvserver/commands"

// legacyCommands are the rows of the command families that have not moved
// to package commands yet; their handlers still take the whole server.
var legacyCommands = []*commands.Spec{
	{Name: "info", Arity: -1, Flags: commands.FlagLoading | commands.FlagStale, ACL: "@slow @dangerous", Handler: legacy((*Server).cmdInfo)},
	{Name: "config", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*commands.Spec{
		{Name: "config|resetstat", Arity: 2, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdConfigResetstat)},
		{Name: "config|rewrite", Arity: 2, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdConfigRewrite)},
		{Name: "config|help", Arity: 2, Flags: commands.FlagLoading | commands.FlagStale, ACL: "@slow", Handler: legacy((*Server).cmdConfigHelp)},
		{Name: "config|get", Arity: -3, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdConfigGet)},
		{Name: "config|set", Arity: -4, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdConfigSet)},
	}},
	{Name: "time", Arity: 1, Flags: commands.FlagLoading | commands.FlagStale | commands.FlagFast, ACL: "@fast", Handler: legacy((*Server).cmdTime)},
	{Name: "lastsave", Arity: 1, Flags: commands.FlagLoading | commands.FlagStale | commands.FlagFast, ACL: "@admin @fast @dangerous", Handler: legacy((*Server).cmdLastsave)},
	{Name: "save", Arity: 1, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagNoAsyncLoading | commands.FlagNoMulti, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdSave)},
	{Name: "bgsave", Arity: -1, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdBgsave)},
	{Name: "debug", Arity: -2, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale, ACL: "@admin @slow @dangerous", Protected: true, Handler: legacy((*Server).cmdDebug)},
	{Name: "shutdown", Arity: -1, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagLoading | commands.FlagStale | commands.FlagNoMulti | commands.FlagAllowBusy, ACL: "@admin @slow @dangerous", Handler: legacy((*Server).cmdShutdown)},
}

// commandSpecs is the whole command table: package commands' families,
// then the legacy ones.
func commandSpecs() []*commands.Spec {
	return append(commands.Specs(), legacyCommands...)
}
