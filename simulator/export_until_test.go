package simulator

import "sigs.k8s.io/controller-runtime/pkg/client"

// SharedReader is the reader a workload step's Until condition gets
// (untilReader: shallow copies of the stored revisions), for the tests of
// package simulator_test.
func (w *World) SharedReader() client.Reader { return untilReader{&untilMemo{w: w}} }

// UntilReads runs read with the reader a workload step's Until gets and
// returns the kinds its memo noted (what makes the condition asked again
// when they change), in the order read, and whether it lost track.
func (w *World) UntilReads(read func(client.Reader)) (kinds []string, blind bool) {
	m := &untilMemo{}
	m.reset(w)
	read(m.reader())
	for _, s := range m.seen {
		kinds = append(kinds, s.kind.gvk.Kind)
	}
	return kinds, m.blind
}
