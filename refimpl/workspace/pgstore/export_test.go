package pgstore

// PageQuery exposes the keyset page query of a filter to the external
// tests, which check its plan.
func PageQuery(where string) string { return pageQuery(where) }

// FilterWhere exposes the filters' WHERE clauses.
var FilterWhere = filterWhere
