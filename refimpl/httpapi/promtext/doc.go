// Package promtext is a tiny metrics registry written out in the Prometheus
// text exposition format (version 0.0.4): counters, gauges and histograms,
// each with a fixed set of label names. It exists so that converge's HTTP
// API can serve /metrics without the Prometheus client library; it does
// only what the API needs.
//
// Families are written sorted by name and series sorted by label values, so
// the output is stable. Registering an invalid or duplicate name panics: it
// is a programming error, found by the first test that builds the registry.
package promtext
