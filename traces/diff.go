package traces

// Diff compares the event lines of a trace (want) with those of a replay
// (got). It returns the index of the first line that differs, with both
// lines ("" for a line one side does not have), or same=true (and index
// -1) when the two are identical.
func Diff(want, got []string) (index int, wantLine, gotLine string, same bool) {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if i >= len(want) || i >= len(got) || w != g {
			return i, w, g, false
		}
	}
	return -1, "", "", true
}
