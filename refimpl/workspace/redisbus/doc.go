// Package redisbus is ports.Bus on Redis with go-redis v9: pub/sub,
// integer counters and expiring keys.
//
// Pub/sub is at most once, as Redis's is. Subscribe returns only once the
// server has confirmed the subscription, so a message published after
// Subscribe returns reaches it. A goroutine per subscription moves
// messages into a buffer that Poll drains and signals Ready; when the
// buffer holds its cap the newest message is dropped and counted
// (Subscription.Dropped, Bus.Dropped). go-redis pings the subscription's
// connection and, when it is lost, reconnects and subscribes again;
// messages published in the gap are lost. Each re-subscription is logged
// and counted (Subscription.Resubscribed): callers that cannot afford a
// lost message resynchronise from the store, as the port's doc requires
// of every subscriber anyway.
//
// Errors are wrapped with the command and key. An error that is not a
// reply of the server (the connection failed) also wraps
// contracts.ErrUnavailable.
package redisbus
