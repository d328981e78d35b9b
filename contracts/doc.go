// Package contracts is the workspace control plane's shared vocabulary:
// what the reference, the judge, the fakes and a third party's system all
// read.
//
// It holds the data model (Workspace and its enums), writes and their
// conditions (Patch, Cond, Writer) and column ownership, the names of real
// resources, the error taxonomy and codes, the display state, and the
// rules the store ports themselves enforce (filters, running limits, text
// limits), which the fakes and pgstore apply alike. The reference's own
// decisions (the operation table, retries, TTLs, the GC, the API's
// checks) are not here: they live with the reference, in
// refimpl/workspace/decide, and the judge reads SPEC on its own.
//
// Conventions: a nullable string column is the empty string when null, a
// nullable timestamp is the zero time.Time when null, and a nullable JSON
// column is a nil pointer when null.
package contracts
