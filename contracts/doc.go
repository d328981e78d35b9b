// Package contracts is the workspace control plane's specification as code.
//
// It holds the data model (Workspace and its enums), the names of real
// resources, the error taxonomy, column ownership, and every decision table of
// the spec as a pure function of (row, observation, now). Nothing here does
// I/O, reads the wall clock or draws random numbers: the reference coordinator
// (refimpl), the simulator (sim) and the checkers (judge/workspace) all
// decide through these functions, so a rule is written once.
//
// Conventions: a nullable string column is the empty string when null, a
// nullable timestamp is the zero time.Time when null, and a nullable JSON
// column is a nil pointer when null.
package contracts
