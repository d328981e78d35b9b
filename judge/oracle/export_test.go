package oracle

// RequireSameSteps is requireSameSteps, for the external tests that judge
// simulated histories.
var RequireSameSteps = requireSameSteps
