package tests

import "testing"

// pythonTrackingScript drives client-side caching through redis-py's own
// API (RESP2): client_tracking_on with a redirect to a PubSub connection
// subscribed to __redis__:invalidate, default mode and BCAST with a
// prefix. Its expected output is what it prints against redis-server
// 7.0.15.
const pythonTrackingScript = `import sys
import redis

kw = dict(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
r = redis.Redis(**kw)
p = r.pubsub()
p.subscribe("__redis__:invalidate")
print("subscribed", p.get_message(timeout=2)["type"])
pid = [c["id"] for c in r.client_list() if c.get("sub") == "1"][0]
t = redis.Redis(single_connection_client=True, **kw)
print("tracking", t.client_tracking_on(clientid=int(pid)))
print("trackinginfo", t.client_trackinginfo()[0:2])
print("getredir", t.client_getredir() == int(pid))
t.get("py:k")
t.mget("py:a", "py:b")
r.set("py:k", "1")
m = p.get_message(timeout=2)
print("invalidate", m["channel"], m["data"])
r.mset({"py:a": "1", "py:b": "2"})
print("invalidate", sorted(p.get_message(timeout=2)["data"] + p.get_message(timeout=2)["data"]))
r.flushdb()
print("flush", p.get_message(timeout=2)["data"])
print("off", t.client_tracking_off())
print("bcast", t.client_tracking_on(clientid=int(pid), bcast=True, prefix=["py:x:"]))
r.set("py:x:1", "v")
r.set("py:y", "v")
print("bcast invalidate", p.get_message(timeout=2)["data"], p.get_message(timeout=0.3))
print("list flags", [c["flags"] for c in r.client_list() if c["id"] == str(t.client_id())])
`

// TestPythonRedisTracking runs redis-py's client tracking against kvserver.
func TestPythonRedisTracking(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonTrackingScript)
	const want = `subscribed subscribe
tracking b'OK'
trackinginfo ['flags', [b'on']]
getredir True
invalidate b'__redis__:invalidate' [b'py:k']
invalidate [b'py:a', b'py:b']
flush None
off b'OK'
bcast b'OK'
bcast invalidate [b'py:x:1'] None
list flags ['tB']
`
	if string(out) != want {
		t.Errorf("redis-py printed:\n%s\nwant (redis-server's output):\n%s", out, want)
	}
}

// pythonMonitorScript reads the MONITOR feed through redis-py's Monitor,
// which parses each line (time, db, address, quoted arguments).
const pythonMonitorScript = `import sys
import redis

kw = dict(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
r = redis.Redis(**kw)
with r.monitor() as m:
    r.set("py:m", "a b")
    r.get("py:m")
    r.mget("py:m", "py:none")
    for _ in range(3):
        c = m.next_command()
        print("monitor", c["db"], c["command"], c["client_type"])
`

// TestPythonRedisMonitor runs redis-py's Monitor against kvserver; the
// expected output is redis-server 7.0.15's.
func TestPythonRedisMonitor(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonMonitorScript)
	const want = `monitor 0 SET py:m a b tcp
monitor 0 GET py:m tcp
monitor 0 MGET py:m py:none tcp
`
	if string(out) != want {
		t.Errorf("redis-py printed:\n%s\nwant (redis-server's output):\n%s", out, want)
	}
}
