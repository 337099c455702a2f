package traces

import (
	"io"

	"github.com/opcheck/opcheck/model"
)

// WriteLinearizabilityFile writes the linearizability view of h (see
// WriteLinearizability) atomically to path, creating missing directories.
func WriteLinearizabilityFile(path string, h *model.History) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteLinearizability(w, h) })
}
