// Package layout holds no code: its test enforces the module's dependency
// rules (docs/architecture.md) on every package's non-test imports.
package layout
