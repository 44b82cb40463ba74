// Package pubsub is the registry of Redis pub/sub subscriptions and the
// fan-out of a published message to them (Redis's pubsub.c): channels,
// patterns (Redis glob rules) and shard channels, each subscription owned
// by a Subscriber.
//
// The Hub never writes to a connection and never blocks on one: Publish
// hands each receiver the message through Subscriber.Deliver, which must
// queue it and return (package server queues it on the connection, which
// writes it between its own replies and is closed by the pubsub output
// buffer limit when it falls behind). One mutex orders every publication,
// so that all subscribers of a channel see its messages, and messages
// published by different clients, in one order, as Redis's single thread
// does.
//
// It knows nothing of commands, replies or the keyspace; Encode writes a
// delivery in RESP because every receiver needs exactly those bytes.
package pubsub
