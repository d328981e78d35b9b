// Package chart draws a judged run as one self-contained HTML page (no
// scripts, no external resources), the same page for both worlds: rows of
// swimlanes over virtual time — the instances of the system judged on
// top, then one row per subject (a workspace, an oracle request) — with
// point marks (faults, crashes) and the run's violations, the first one
// marked on its subject's row and listed with the timeline that proves it.
//
// A world only turns its history into a Page (which rows, which lanes,
// which values and colours); the layout, the escaping and the markup are
// written once here.
package chart
