package commands

import (
	"slices"

	"github.com/kvserver/kvserver/tracking"
)

// Client-side caching: CLIENT TRACKING, CACHING, TRACKINGINFO and GETREDIR
// (Redis's networking.c over tracking.c). Their rows sit in the CLIENT
// container (connection.go); the server remembers what a tracking client
// reads from the key specs of read-only commands and invalidates through
// the engine's key changes, so no data handler knows about tracking.

// Tracking is client-side caching as the connection running the command
// sees it; package server implements it over a tracking.Table.
type Tracking interface {
	// TrackingOn turns tracking on with mode, returning Redis's error reply or
	// "" (the checks of tracking.Table.Enable, plus the redirect target's
	// existence).
	TrackingOn(mode tracking.Mode) string
	// TrackingOff turns it off (CLIENT TRACKING OFF, RESET).
	TrackingOff()
	// TrackingInfo is the connection's tracking state.
	TrackingInfo() tracking.Info
	// SetCaching is CLIENT CACHING YES|NO for the next command.
	SetCaching(on bool)
	// TrackingStats are the server's tracking counters (INFO).
	TrackingStats() tracking.Stats
}

const errCachingNotTracking = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"

// cmdClientTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]...
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP], parsed as Redis's clientCommand.
func cmdClientTracking(x *Ctx) {
	args := x.Args
	var mode tracking.Mode
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case equalFold(args[j], "redirect") && more > 0:
			j++
			if mode.Redirect != 0 {
				x.W.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := ParseInt64(args[j])
			if !ok {
				x.W.Error(errNotInteger)
				return
			}
			if _, exists := x.Clients.Get(id); !exists {
				x.W.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			mode.Redirect = id
		case equalFold(args[j], "bcast"):
			mode.BCAST = true
		case equalFold(args[j], "optin"):
			mode.OptIn = true
		case equalFold(args[j], "optout"):
			mode.OptOut = true
		case equalFold(args[j], "noloop"):
			mode.NoLoop = true
		case equalFold(args[j], "prefix") && more > 0:
			j++
			mode.Prefixes = append(mode.Prefixes, string(args[j]))
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	switch {
	case equalFold(args[2], "on"):
		if msg := x.Tracking.TrackingOn(mode); msg != "" {
			x.W.Error(msg)
			return
		}
	case equalFold(args[2], "off"):
		x.Tracking.TrackingOff()
	default:
		x.W.Error(errSyntax)
		return
	}
	x.W.OK()
}

// cmdClientCaching is CLIENT CACHING YES|NO.
func cmdClientCaching(x *Ctx) {
	info := x.Tracking.TrackingInfo()
	if !info.On {
		x.W.Error(errCachingNotTracking)
		return
	}
	switch {
	case equalFold(x.Args[2], "yes"):
		if !info.Mode.OptIn {
			x.W.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case equalFold(x.Args[2], "no"):
		if !info.Mode.OptOut {
			x.W.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		x.W.Error(errSyntax)
		return
	}
	x.Tracking.SetCaching(true)
	x.W.OK()
}

// cmdClientGetredir is CLIENT GETREDIR: the redirect target, 0 for none,
// -1 when not tracking.
func cmdClientGetredir(x *Ctx) {
	info := x.Tracking.TrackingInfo()
	if !info.On {
		x.W.Int(-1)
		return
	}
	x.W.Int(info.Mode.Redirect)
}

// cmdClientTrackinginfo is CLIENT TRACKINGINFO: a map of the flags (a
// set), the redirect target and the prefixes.
func cmdClientTrackinginfo(x *Ctx) {
	info := x.Tracking.TrackingInfo()
	m := info.Mode
	flags := []string{"off"}
	if info.On {
		flags[0] = "on"
	}
	// In Redis's order.
	for _, f := range []struct {
		set  bool
		name string
	}{
		{m.BCAST, "bcast"},
		{m.OptIn, "optin"}, {m.OptIn && info.Caching, "caching-yes"},
		{m.OptOut, "optout"}, {m.OptOut && info.Caching, "caching-no"},
		{m.NoLoop, "noloop"},
		{info.BrokenRedir, "broken_redirect"},
	} {
		if f.set {
			flags = append(flags, f.name)
		}
	}
	x.W.Map(3)
	x.W.BulkString("flags")
	x.W.Set(len(flags))
	for _, f := range flags {
		x.W.BulkString(f)
	}
	x.W.BulkString("redirect")
	if info.On {
		x.W.Int(m.Redirect)
	} else {
		x.W.Int(-1)
	}
	x.W.BulkString("prefixes")
	prefixes := slices.Sorted(slices.Values(m.Prefixes))
	x.W.Array(len(prefixes))
	for _, p := range prefixes {
		x.W.BulkString(p)
	}
}
