// Package scenarios holds the spec's named scenarios (SPEC 6) as tests
// driven by the simulator, and the helpers that read a recorded history
// back as the sequences a person would describe: which operations were
// claimed and how they ended, which observed states a workspace went
// through, and who wrote what.
package scenarios
