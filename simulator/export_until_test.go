package simulator

import "sigs.k8s.io/controller-runtime/pkg/client"

// SharedReader is the reader a workload step's Until condition gets
// (untilReader: shallow copies of the stored revisions), for the tests of
// package simulator_test.
func (w *World) SharedReader() client.Reader { return untilReader{&untilMemo{w: w}} }
