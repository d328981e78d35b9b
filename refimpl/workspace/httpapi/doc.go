// Package httpapi is the HTTP transport of the API (SPEC 4.3, 4.6): JSON
// over HTTP under /api/v1 in front of a ports.API service layer, with
// bearer-token authentication, Server-Sent Events per workspace, /healthz
// and /metrics.
//
// Routes (all under /api/v1 need "Authorization: Bearer <token>"):
//
//	POST   /api/v1/workspaces                  create; 201 and the workspace
//	GET    /api/v1/workspaces                  {"workspaces":[…]}, the caller's own
//	GET    /api/v1/workspaces/{id}             the workspace
//	PATCH  /api/v1/workspaces/{id}             edit; 200 and the workspace
//	DELETE /api/v1/workspaces/{id}             soft delete; 202
//	POST   /api/v1/workspaces/{id}:recover     admin only; 200
//	GET    /api/v1/workspaces/{id}/events      text/event-stream
//	GET    /api/v1/admin/workspaces            admin only; every user's, ?health= &display=
//	GET    /healthz                            200 or 503, JSON
//	GET    /metrics                            Prometheus text format
//
// docs/api.md documents every route for users; apidoc_test.go holds it to
// this package (routes, fields, error codes, limits, and its examples run).
//
// Every error is JSON: {"error":{"code":"…","message":"…", …details}}. The
// service layer decides every rule and returns *contracts.APIError; this
// package adds the transport's own rejections: 401 (no or unknown token),
// 403 (recovery without the admin role), 404 (unknown path, or an id that
// is not a UUID — never a 500 from the database), 405 (with Allow; the
// body names the allowed methods, never the one sent), 413
// (bodies over 64 KiB), 415 (a body whose Content-Type is not
// application/json: a choice; 400 stays for bodies that are not valid
// JSON, hold unknown fields or a field of the wrong type, each naming the
// field), and 503 when a dependency is unavailable. A client mistake is
// never a 500.
//
// The admin listing (served when the API implements ports.AdminAPI) is
// {"workspaces":[…]} with each workspace's owner_user_id and deleted_at
// besides the usual fields, ordered by id; health=OK|ERROR and
// display=PENDING|ARCHIVED|STANDBY|RUNNING|ERROR|DELETED filter it
// (DELETED workspaces only when display=DELETED asks for them). A query
// with another parameter, a repeated one or an unknown value is a 400.
//
// PATCH fields are pointers: an absent field (or null) leaves the column as
// it is; "" clears description or memo (a nullable text column holds "" for
// null in converge's model).
//
// Events. GET …/events checks ownership (404), subscribes to the bus
// channel workspace:{id} on which the coordinator's EventListener
// republishes change notifications (ports.Change), and streams
//
//	event: state_changed  data: {"workspace_id","display_state","operation","desired_state","deleted","at"}
//	event: error          data: {"workspace_id","error_message","error_count","at"}
//	event: heartbeat      data: {"timestamp"}
//
// state_changed goes out when the display state, the operation, the
// desired state or the soft-deleted flag differs from the last state the
// stream knew (the workspace as read when the stream opened, then each
// change): that covers an operation's start and end, a desired-state change
// and recovery from ERROR (SPEC 4.6), and also observation changes such as
// a crashed container, which clients want to see too. error goes out when a
// change records a new error (its message or count differs). The stream
// ends when the workspace reaches DELETED, when the client goes away or when
// Config.StreamsDone is closed. Events are hints: clients resynchronise
// with GET.
//
// Metrics are served by prometheus/client_golang, with its Go runtime
// (go_*) and process (process_*) collectors. Every label of converge's own
// families takes its values from a fixed set — the route template or
// "unmatched", a standard HTTP method or "OTHER", a status code, an
// operation kind — so no client can grow the number of series, and no
// error body or log line repeats a client's method. Metrics also carries
// the hooks the serve command feeds: ObserveStep (the production runner's
// OnStep) and InstrumentStore (operations started, completed and failed,
// read off the StateReconciler's writes).
package httpapi
