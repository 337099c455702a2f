package explore

import "fmt"

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
	// MonitorReplayed (exhaustive) is the events shown again to property
	// monitors that could not be forked (Report.MonitorReplayed).
	MonitorReplayed int `json:"monitor_replayed,omitempty"`
	// Reconciles is the reconciles the schedules ran (Report.Reconciles;
	// merge sums it over shards).
	Reconciles int `json:"reconciles,omitempty"`
	// Reexplored (exhaustive) is 1 when the search ran again with exact
	// merging (Report.Reexplored; merge sums it over shards).
	Reexplored int `json:"reexplored,omitempty"`
	// FaultsExplored (exhaustive) is Report.FaultsExplored: every
	// schedule with at most this many faults ran and broke no property
	// (-1: not even the one without faults). merge keeps the smallest of
	// the shards', and -1 unless every shard is there. Cut names the
	// budget that ended an inconclusive search ("schedules" or "time").
	FaultsExplored *int   `json:"faults_explored,omitempty"`
	Cut            string `json:"cut,omitempty"`
	ElapsedMS      int64  `json:"elapsed_ms"`
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
	res := Result{Scenario: r.Scenario, Strategy: r.Strategy, Verdict: r.Verdict, Schedules: r.Schedules, States: r.States, Pruned: r.Pruned, Steps: r.Steps, Replayed: r.Replayed, Resumed: r.Resumed, MonitorReplayed: r.MonitorReplayed, Reconciles: r.Reconciles, Reexplored: r.Reexplored, ElapsedMS: r.Elapsed.Milliseconds(), Trace: r.Trace, Replay: r.Replay, Shard: &shard, Shards: &shards}
	if r.Strategy == StrategyExhaustive {
		n := r.FaultsExplored
		res.FaultsExplored, res.Cut = &n, r.Cut
	}
	if r.Violation != nil {
		res.Property = r.Violation.Property
	}
	if r.Err != nil {
		res.Error = r.Err.Error()
	}
	return res
}

// Coverage says in words what an exhaustive search covered, in faults
// (Report.FaultsExplored), and for an inconclusive one which budget ended
// it; "" for the sampling strategies and for errors.
func (r Report) Coverage() string {
	if r.Strategy != StrategyExhaustive || r.Verdict == VerdictError {
		return ""
	}
	total := r.Faults.Total()
	var covered string
	switch n := r.FaultsExplored; {
	case n < 0:
		covered = "not even the schedule without faults was explored to its end"
	case n == 0:
		covered = schedulesUpTo(0) + " was explored"
	default:
		covered = fmt.Sprintf("%s (of %d: %s) was explored", schedulesUpTo(n), total, r.Faults)
	}
	switch r.Verdict {
	case VerdictVerified:
		return fmt.Sprintf("every schedule with at most %s (%s) was explored", faults(total), r.Faults)
	case VerdictViolation:
		switch k := r.violationFaults; {
		case k == 0:
			return fmt.Sprintf("it takes no fault (of %d: %s)", total, r.Faults)
		case r.FaultsExplored == k-1:
			return fmt.Sprintf("it takes %s (of %d: %s), the fewest of any violating schedule: every schedule with fewer ran and broke no property", faults(k), total, r.Faults)
		default:
			// A budget ended the search before the schedules with
			// fewer faults were all explored.
			return fmt.Sprintf("it takes %s; a schedule with fewer may violate too: %s", faults(k), covered)
		}
	}
	budget := "a budget"
	switch r.Cut {
	case CutSchedules:
		budget = fmt.Sprintf("the schedule budget (%d) ran out", r.Schedules)
	case CutTime:
		budget = fmt.Sprintf("the time budget ran out after %d schedules", r.Schedules)
	}
	return fmt.Sprintf("%s, none broke a property; %s among the schedules with %s", covered, budget, faults(r.FaultsExplored+1))
}

// schedulesUpTo names the schedules with at most n faults.
func schedulesUpTo(n int) string {
	if n == 0 {
		return "only the schedule without faults"
	}
	return "every schedule with at most " + faults(n)
}

// faults is "1 fault" or "n faults".
func faults(n int) string {
	if n == 1 {
		return "1 fault"
	}
	return fmt.Sprintf("%d faults", n)
}
