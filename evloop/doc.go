// Package evloop serves many non-blocking sockets from a few goroutines, the
// way Redis's event loop (ae.c) does: each loop has an epoll instance for
// the sockets of its idle connections, and runs the handler of every
// connection that became readable on its own goroutine, one after the
// other. A small request costs one read, the command and one write; one
// goroutine wake-up serves every connection ready at that moment, and the
// Go runtime's poller never sees the sockets. (A loop parks in the
// runtime's poller when idle rather than blocking a thread in epoll_wait:
// a blocked thread costs its P a hand-off and makes sysmon poll every
// 20 µs, which measured worse. It parks on a gate, a second epoll instance
// that holds the loop's with a one-shot registration armed only while the
// loop waits, so that sockets becoming readable while the loop is busy do
// not wake an idle thread of the runtime each time. For the same reason
// as the parking, the reads and writes of up to 64 KiB, which never
// block, are raw system calls: see rawIO.)
//
// A connection is in one of two modes. Parked, it belongs to its loop: the
// loop calls the Handler when bytes arrive (or when Wake or a past read
// deadline asks for it). Running, it belongs to a goroutine of the caller,
// which uses it as an ordinary blocking net.Conn (Read, Write, deadlines)
// until it calls Park again. A handler that must block (a read or write
// that would wait, a command that waits for keys or for other clients)
// calls Detach, or simply blocks in Read or Write, which detach for it:
// the loop's role passes to a fresh goroutine (leader/follower), and the
// handler's goroutine goes on as the connection's own. Nothing that blocks
// ever holds up the other connections of the loop.
//
// Reads and writes of a socket are raw system calls (sys.go): every
// descriptor is non-blocking, so none of them waits, and the scheduler's
// bookkeeping for a system call (and the sysmon wake-ups and P hand-offs
// it brings) cost more than a small read or write itself.
//
// A handler may Defer its connection: the loop runs it once more (Again)
// after the other connections of the batch, which is how the server writes
// replies, like Redis, at the end of a pass over the ready clients rather
// than after each: the clients answered together send together, and the
// next wait finds many ready where it found one.
//
// Blocking waits of running connections are served by the same epoll
// instance with one-shot registrations, so every socket of the package is
// watched by exactly one poller.
package evloop
