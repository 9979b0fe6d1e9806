// Package proof holds the diagnosis's proof on the simulator, as tests only:
// for each simulator scenario it drives the sim on its simulated clock,
// scrapes it through the real vLLM adapter, runs the Diagnoser, checks that
// the expected finding comes first, applies the finding's suggested flag to
// a fresh simulator, re-runs the same workload and asserts that the targeted
// metric improved.
//
// It lives apart from package diagnosis because it needs the simulator and
// the engine adapter, which the pure diagnosis package must not import.
package proof
