// Package api is the reference API service layer (SPEC 4.3): creation,
// desired-state changes, soft deletion, administrator recovery and
// auto-wake, with the running limits. It is the only writer of
// desired_state, deleted_at, the TTL columns and last_access_at; the TTL
// Manager, the proxy and the StateReconciler write those through it.
// HTTP transport lives elsewhere; this layer speaks Go and returns
// *contracts.APIError for every rejection.
package api
