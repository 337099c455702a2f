package explore

// Result is the JSON form of a Report: one line of `explore check -json`
// per scenario and shard, and, merged over the shards, one line of
// `explore merge -json`. The same type serves both, so a tool reads both
// alike.
type Result struct {
	Scenario string `json:"scenario"`
	// Strategy is the strategy the schedules ran with ("" in results
	// written before the field existed).
	Strategy  string `json:"strategy,omitempty"`
	Verdict   string `json:"verdict"`
	Property  string `json:"property,omitempty"`
	Schedules int    `json:"schedules"`
	States    int    `json:"states"`
	// Pruned (exhaustive) counts schedules cut short at a state already
	// explored; Steps the steps of every schedule run.
	Pruned int `json:"pruned,omitempty"`
	Steps  int `json:"steps,omitempty"`
	// Replayed (exhaustive) is the part of Steps that replayed the
	// prefixes of the search's items (Report.Replayed).
	Replayed int `json:"replayed,omitempty"`
	// Resumed (exhaustive) is the part of Steps that schedules did not
	// run because they resumed from a checkpoint (Report.Resumed).
	Resumed int `json:"resumed,omitempty"`
	// Reexplored (exhaustive) is 1 when the search ran again with exact
	// merging (Report.Reexplored; merge sums it over shards).
	Reexplored int   `json:"reexplored,omitempty"`
	ElapsedMS  int64 `json:"elapsed_ms"`
	// Trace is the trace file of the violation, Replay the command that
	// replays it.
	Trace  string `json:"trace,omitempty"`
	Replay string `json:"replay,omitempty"`
	Error  string `json:"error,omitempty"`
	// Shard and Shards name the shard that wrote a check line (merge
	// accepts lines without them: each input file is then one shard). A
	// merged line has no Shard; ShardsSeen of its Shards were present.
	Shard      *int `json:"shard,omitempty"`
	Shards     *int `json:"shards,omitempty"`
	ShardsSeen *int `json:"shards_seen,omitempty"`
}

// Result is r as one JSON result line of its shard.
func (r Report) Result() Result {
	shard, shards := r.Shard, max(r.Shards, 1)
	res := Result{Scenario: r.Scenario, Strategy: r.Strategy, Verdict: r.Verdict, Schedules: r.Schedules, States: r.States, Pruned: r.Pruned, Steps: r.Steps, Replayed: r.Replayed, Resumed: r.Resumed, Reexplored: r.Reexplored, ElapsedMS: r.Elapsed.Milliseconds(), Trace: r.Trace, Replay: r.Replay, Shard: &shard, Shards: &shards}
	if r.Violation != nil {
		res.Property = r.Violation.Property
	}
	if r.Err != nil {
		res.Error = r.Err.Error()
	}
	return res
}
