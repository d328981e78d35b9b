// Package oracledtest holds test doubles for the oracle daemon's tests, in
// the spirit of net/http/httptest: Chain, a scripted chain state, and
// Node, a CometBFT RPC endpoint on loopback (JSON-RPC over HTTP POST and a
// /websocket for subscriptions) answering from a Chain and sending the
// frames a test publishes. They are small and scripted on purpose; the
// simulated chain is fakes/oracle/chain and the black-box façade is built on it.
package oracledtest
