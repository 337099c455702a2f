package explore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// faultsTaken counts the faults a schedule took: the steps that spend a
// fault (a restart or a resumed cache follows one, and spends none).
func faultsTaken(h *model.History) int {
	n := 0
	for _, e := range h.Events {
		switch e.Op {
		case model.OpCrash, model.OpPauseCache, model.OpDropEvent, model.OpExpireWatch, model.OpEvict:
			n++
		}
	}
	return n
}

// faultsByIndex runs the whole search on one worker, where schedules run
// in the search's order, and returns the faults of each schedule by index.
func faultsByIndex(t *testing.T, sc *simulator.Scenario, b model.FaultBudget) ([]int, Report) {
	t.Helper()
	var faults []int
	rep := Explore(sc, Options{Faults: &b, Workers: 1, Visit: func(i int, _ uint64, r *simulator.Result) {
		for len(faults) <= i {
			faults = append(faults, -1)
		}
		faults[i] = faultsTaken(r.History)
	}})
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	for i := 1; i < len(faults); i++ {
		if faults[i] < faults[i-1] {
			t.Fatalf("schedule %d took %d faults after schedule %d took %d: the search does not run fewest faults first", i, faults[i], i-1, faults[i-1])
		}
	}
	return faults, rep
}

// An exhaustive search that a schedule budget ends says how many faults
// it covered: every schedule with at most FaultsExplored faults. The
// oracle is the whole search on one worker, which runs schedules fewest
// faults first: a budget of B schedules covers every number of faults
// below that of schedule B. With two workers the schedules run are not
// the same, but what a search claims must hold all the same: no more than
// the one-worker search covers with the same budget plus the schedules a
// second worker may have run ahead, and never a level that holds a
// schedule it did not run.
func TestBudgetCutSearchSaysWhichFaultsItExplored(t *testing.T) {
	sc := lookup(t, "zookeeper/fixed")
	b := model.FaultBudget{Crashes: 1, Stale: 1}
	faults, full := faultsByIndex(t, sc, b)
	if full.Verdict != VerdictVerified || full.FaultsExplored != b.Total() {
		t.Fatalf("the whole search: %s with faults_explored %d, want verified with %d", full.Verdict, full.FaultsExplored, b.Total())
	}
	first := map[int]int{} // the index of the first schedule with n faults
	for i := len(faults) - 1; i >= 0; i-- {
		first[faults[i]] = i
	}
	if len(first) != b.Total()+1 {
		t.Fatalf("schedules by faults %v: want every number of faults from 0 to %d", first, b.Total())
	}
	budgets := []int{1, 2, first[1] - 1, first[1], first[1] + 1, first[2] - 1, first[2], first[2] + 7, len(faults) - 1}
	for _, budget := range budgets {
		if budget < 1 {
			continue // 0 is the default budget
		}
		rep := Explore(sc, Options{Faults: &b, Workers: 1, Schedules: budget})
		want := faults[budget] - 1
		if rep.Verdict != VerdictInconclusive || rep.Cut != CutSchedules || rep.FaultsExplored != want {
			t.Errorf("budget %d: %s, cut %q, faults_explored %d; want inconclusive, cut %q, %d (schedule %d is the first not run, with %d faults)", budget, rep.Verdict, rep.Cut, rep.FaultsExplored, CutSchedules, want, budget, faults[budget])
		}
		two := Explore(sc, Options{Faults: &b, Workers: 2, Schedules: budget})
		if two.Verdict != VerdictInconclusive || two.FaultsExplored > faults[min(budget+1, len(faults)-1)]-1 {
			t.Errorf("budget %d, two workers: %s with faults_explored %d; one worker's covers %d", budget, two.Verdict, two.FaultsExplored, want)
		}
	}
	rep := Explore(sc, Options{Faults: &b, Workers: 1, Schedules: first[2]})
	if c := rep.Coverage(); !strings.Contains(c, "every schedule with at most 1 fault (of 2: crashes=1 stale=1") || !strings.Contains(c, "the schedule budget") || !strings.HasSuffix(c, "among the schedules with 2 faults") {
		t.Errorf("Coverage: %q", c)
	}
}

// A violation's report covers the faults below its own: the search meets
// the schedules with fewer faults first, and none of them violated. A
// search cut before it finds the violation never claims the violation's
// number of faults, whatever the budget and the workers.
func TestExploredFaultsStopBelowAViolation(t *testing.T) {
	sc := lookup(t, "zookeeper/buggy")
	full := Explore(sc, Options{Workers: 1})
	if full.Verdict != VerdictViolation {
		t.Fatalf("zookeeper/buggy: %s, want a violation", full.Verdict)
	}
	k := faultsTaken(full.History)
	if k == 0 || full.FaultsExplored != k-1 || full.violationFaults != k {
		t.Fatalf("the violation took %d faults; faults_explored %d, want %d", k, full.FaultsExplored, k-1)
	}
	for _, budget := range []int{1, full.Index / 4, full.Index / 2, full.Index} {
		for _, workers := range []int{1, 2} {
			rep := Explore(sc, Options{Workers: workers, Schedules: budget})
			if rep.Verdict == VerdictViolation {
				continue // two workers may reach it within the budget
			}
			if rep.FaultsExplored >= k {
				t.Errorf("budget %d, %d workers: %s claims every schedule with at most %d faults, but one with %d violates", budget, workers, rep.Verdict, rep.FaultsExplored, k)
			}
		}
	}
}

// A time budget is named as such; the sampling strategies claim nothing
// in faults, and their JSON carries no faults_explored.
func TestExploredFaultsOfOtherEnds(t *testing.T) {
	sc := lookup(t, "zookeeper/fixed")
	rep := Explore(sc, Options{Workers: 1, Time: 1}) // a nanosecond: cut at the first check
	if rep.Verdict != VerdictInconclusive || rep.Cut != CutTime || !strings.Contains(rep.Coverage(), "the time budget ran out") {
		t.Errorf("time budget: %s, cut %q, %q", rep.Verdict, rep.Cut, rep.Coverage())
	}
	random := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 2, Workers: 1})
	if random.FaultsExplored != -1 || random.Coverage() != "" || random.Result().FaultsExplored != nil {
		t.Errorf("random: faults_explored %d, coverage %q", random.FaultsExplored, random.Coverage())
	}
}

// merge keeps the fewest faults any shard explored, and none when a shard
// is missing or a line does not say.
func TestMergeKeepsTheFewestFaultsExplored(t *testing.T) {
	dir := t.TempDir()
	line := func(shard, explored int) string {
		return `{"scenario":"s","strategy":"exhaustive","verdict":"inconclusive","schedules":5,"states":3,"elapsed_ms":1,"cut":"schedules","shard":` + strconv.Itoa(shard) + `,"shards":2,"faults_explored":` + strconv.Itoa(explored) + `}`
	}
	a := writeLines(t, dir, "a.json", line(0, 2))
	b := writeLines(t, dir, "b.json", line(1, 1))
	code, out, errs := runCLI(t, "merge", "-json", a, b)
	if code != exitOK || !strings.Contains(out, `"faults_explored":1`) || !strings.Contains(out, `"cut":"schedules"`) {
		t.Errorf("two shards: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := runCLI(t, "merge", a, b); !strings.Contains(out, "every schedule with at most 1 fault was explored, in every shard") {
		t.Errorf("table: %s", out)
	}
	if _, out, _ := runCLI(t, "merge", a, writeLines(t, dir, "b0.json", line(1, 0))); !strings.Contains(out, "s: inconclusive: only the schedule without faults was explored, in every shard") {
		t.Errorf("table, a shard that explored no fault: %s", out)
	}
	page := filepath.Join(dir, "report.html")
	if code, _, errs := runCLI(t, "merge", "-html", page, a, b); code != exitOK {
		t.Fatalf("merge -html: exit %d: %s", code, errs)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `<td class="n">1</td>`) || !strings.Contains(string(html), "faults explored") {
		t.Errorf("the HTML report lacks the faults explored (%v):\n%s", err, html)
	}
	if _, out, _ := runCLI(t, "merge", "-json", "-shards", "2", a); !strings.Contains(out, `"faults_explored":-1`) {
		t.Errorf("one shard of two: %s", out)
	}
	c := writeLines(t, dir, "c.json", `{"scenario":"s","verdict":"inconclusive","schedules":5,"states":1,"elapsed_ms":1,"shard":1,"shards":2}`)
	if _, out, _ := runCLI(t, "merge", "-json", a, c); strings.Contains(out, "faults_explored") {
		t.Errorf("a line without faults_explored: %s", out)
	}
}

// Check passes an inconclusive search, and says in the test's log what it
// covered and how to go on.
func TestCheckLogsWhatAnInconclusiveSearchCovered(t *testing.T) {
	ft := &fakeTB{TB: t}
	rep := Check(ft, lookup(t, "zookeeper/fixed"), WithSchedules(3), WithWorkers(1))
	if ft.failed || rep.Verdict != VerdictInconclusive {
		t.Fatalf("Check with 3 schedules: %s (failed: %v %s)", rep.Verdict, ft.failed, ft.msg)
	}
	want := "explore zookeeper/fixed: inconclusive: only the schedule without faults was explored, none broke a property; the schedule budget (3) ran out among the schedules with 1 fault; to go on, raise the budget (WithSchedules, WithTime)"
	if len(ft.logs) != 1 || ft.logs[0] != want {
		t.Errorf("logs %q, want %q", ft.logs, want)
	}
}

// What a violation's report says of its faults: the fewest of any when
// the search explored every schedule with fewer, and that one with fewer
// may violate too when a budget ended the search first (with several
// workers a larger schedule can violate before the smaller ones ran).
func TestCoverageOfAViolation(t *testing.T) {
	b := model.FaultBudget{Crashes: 1, Stale: 1}
	for _, tc := range []struct {
		explored, faults int
		want             string
	}{
		{1, 2, "it takes 2 faults (of 2: crashes=1 stale=1 drops=0 evictions=0), the fewest of any violating schedule: every schedule with fewer ran and broke no property"},
		{0, 1, "it takes 1 fault (of 2: crashes=1 stale=1 drops=0 evictions=0), the fewest of any violating schedule: every schedule with fewer ran and broke no property"},
		{0, 2, "it takes 2 faults; a schedule with fewer may violate too: only the schedule without faults was explored"},
		{-1, 0, "it takes no fault (of 2: crashes=1 stale=1 drops=0 evictions=0)"},
	} {
		rep := Report{Strategy: StrategyExhaustive, Verdict: VerdictViolation, Faults: b, FaultsExplored: tc.explored, violationFaults: tc.faults}
		if got := rep.Coverage(); got != tc.want {
			t.Errorf("explored %d, violation with %d faults:\n got %q\nwant %q", tc.explored, tc.faults, got, tc.want)
		}
	}
}
