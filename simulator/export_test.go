package simulator

// SetWritePaths makes the stores built from now on take the fast write
// paths ("fast"), none of them ("slow"), or the fast ones with every
// dropped answer's request zeroed ("poison"): for the external tests that
// compare whole runs.
func SetWritePaths(paths string) {
	switch paths {
	case "fast":
		writePaths.Store(writesFast)
	case "slow":
		writePaths.Store(writesSlow)
	case "poison":
		writePaths.Store(writesPoisonDropped)
	default:
		panic("SetWritePaths: want fast, slow or poison, not " + paths)
	}
}
