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
	{Name: "cluster", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*commands.Spec{
		{Name: "cluster|addslots", Arity: -3, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|addslotsrange", Arity: -4, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|bumpepoch", Arity: 2, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|count-failure-reports", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterCountFailureReports))},
		{Name: "cluster|countkeysinslot", Arity: 3, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterCountkeysinslot))},
		{Name: "cluster|delslots", Arity: -3, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|delslotsrange", Arity: -4, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|failover", Arity: -2, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|flushslots", Arity: 2, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|forget", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|getkeysinslot", Arity: 4, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterGetkeysinslot))},
		{Name: "cluster|help", Arity: 2, Flags: commands.FlagLoading | commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterHelp))},
		{Name: "cluster|info", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterInfo))},
		{Name: "cluster|keyslot", Arity: 3, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterKeyslot))},
		{Name: "cluster|links", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterLinks))},
		{Name: "cluster|meet", Arity: -4, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|myid", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterMyid))},
		{Name: "cluster|nodes", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterNodes))},
		{Name: "cluster|replicas", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterReplicas))},
		{Name: "cluster|replicate", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|reset", Arity: -2, Flags: commands.FlagAdmin | commands.FlagNoscript | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|saveconfig", Arity: 2, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterSaveconfig))},
		{Name: "cluster|set-config-epoch", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|setslot", Arity: -4, Flags: commands.FlagAdmin | commands.FlagStale | commands.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterStatic))},
		{Name: "cluster|shards", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterShards))},
		{Name: "cluster|slaves", Arity: 3, Flags: commands.FlagAdmin | commands.FlagStale, ACL: "@admin @slow @dangerous", Handler: legacy(clusterOnly((*Server).cmdClusterReplicas))},
		{Name: "cluster|slots", Arity: 2, Flags: commands.FlagStale, ACL: "@slow", Handler: legacy(clusterOnly((*Server).cmdClusterSlots))},
	}},
	{Name: "readonly", Arity: 1, Flags: commands.FlagLoading | commands.FlagStale | commands.FlagFast, ACL: "@fast @connection", Handler: legacy(clusterOnly((*Server).cmdClusterOK))},
	{Name: "readwrite", Arity: 1, Flags: commands.FlagLoading | commands.FlagStale | commands.FlagFast, ACL: "@fast @connection", Handler: legacy(clusterOnly((*Server).cmdClusterOK))},
	{Name: "asking", Arity: 1, Flags: commands.FlagFast, ACL: "@fast @connection", Handler: legacy(clusterOnly((*Server).cmdClusterOK))},
}

// commandSpecs is the whole command table: package commands' families,
// then the legacy ones.
func commandSpecs() []*commands.Spec {
	return append(commands.Specs(), legacyCommands...)
}
