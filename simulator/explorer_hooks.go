package simulator

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// explorerHooks is the part of a World the explorer reads between
// decisions: the state fingerprint a decision offers (World.StateHash),
// whether the chooser pruned the run, and the count of writes (the
// explorer offers faults only after one). It keeps the content hashes of
// stored objects, which never change, for the fingerprint.
type explorerHooks struct {
	fingerprint func() (uint64, bool)
	// mergesStates: the chooser merges states reached again
	// (SettleMerger), so fingerprints are asked for and the controllers
	// that keep memory keep its digest (reconcilerMemory); without it
	// StateHash does not fingerprint a world with such a controller.
	mergesStates bool
	pruned       bool
	// log is the history log of the world's last checkpoint, or of the
	// checkpoint it resumed from (Checkpoint): its next checkpoint
	// copies only what was recorded since.
	log           *historyLog
	writes        int
	contentHashes map[client.Object]uint64
	// inherited holds the content hashes of the objects the checkpoint
	// this world resumed from held (Checkpoint.hashes): its objects are
	// this world's too, shared and immutable, and every world resumed
	// from it would otherwise hash them again. Read only: worlds on other
	// goroutines resume from the same checkpoint.
	inherited map[client.Object]uint64
	content   contentHasher
	keys      []string // scratch for StateHash's sorted keys
	// hashRevisions: StateHash is running for a scenario whose
	// controllers may order resourceVersions, so objects are hashed with
	// theirs.
	hashRevisions bool
}

// observe counts the events that changed the store or touched an external
// system.
func (x *explorerHooks) observe(e *model.Event) {
	if e.Change != model.ChangeNone || e.Op == model.OpExternal {
		x.writes++
	}
}

// notePruned notes that the chooser ended the run (model.Prune).
func (x *explorerHooks) notePruned() { x.pruned = true }
