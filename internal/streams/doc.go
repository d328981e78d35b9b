// Package streams derives independent, reproducible streams of randomness
// from one seed. The simulator's engine, both worlds and their fakes draw
// from it, so one seed decides a whole run and adding draws to one stream
// never shifts another. It imports nothing of the module: it is the leaf
// that lets the fakes stay below the simulator.
package streams
