//go:build race

package probe

// raceEnabled: the race detector is on (it allocates beside the code).
const raceEnabled = true
