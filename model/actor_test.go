package model

import "testing"

func TestActorGroup(t *testing.T) {
	for _, tc := range []struct {
		actor Actor
		want  ActorGroup
	}{
		{ActorUser, GroupUser},
		{ControllerActor("zookeeper-operator"), GroupController},
		{APIServerActor(2), GroupAPIServer},
		{ActorAPIServer, GroupAPIServer},
		{ActorStatefulSet, GroupBuiltIn},
		{ActorKubelet, GroupBuiltIn},
		{ActorGC, GroupBuiltIn},
		{ActorPVCProtection, GroupBuiltIn},
		{ActorNamespace, GroupBuiltIn},
		{ActorFault, GroupFault},
		{ActorClock, GroupClock},
		{"zookeeper-ensemble", GroupExternal},
		// Names that only look like the scheme are external systems.
		{"apiserver-0", GroupExternal},
		{"apiserver-x", GroupExternal},
		{"controllers", GroupExternal},
		{"controller", GroupExternal},
		{"controller/", GroupController},
	} {
		if got := tc.actor.Group(); got != tc.want {
			t.Errorf("Actor(%q).Group() = %s, want %s", tc.actor, got, tc.want)
		}
		if got := tc.actor.IsController(); got != (tc.want == GroupController) {
			t.Errorf("Actor(%q).IsController() = %v, but its group is %s", tc.actor, got, tc.want)
		}
	}
}

func TestAPIServerActorRoundTrip(t *testing.T) {
	for n := 1; n <= 12; n++ {
		got, ok := APIServerNumber(APIServerActor(n))
		if !ok || got != n {
			t.Errorf("APIServerNumber(APIServerActor(%d)) = %d, %v", n, got, ok)
		}
	}
	if _, ok := APIServerNumber(ControllerActor("apiserver-1")); ok {
		t.Error("a controller named apiserver-1 read as an apiserver")
	}
}

func TestGroupAndClassNamesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for g := GroupUser; g <= GroupClock; g++ {
		if n := g.String(); seen[n] || n == "" {
			t.Errorf("group %d has name %q, empty or taken", g, n)
		} else {
			seen[n] = true
		}
	}
	seen = map[string]bool{}
	for c := StepActor; c <= StepClock; c++ {
		if n := c.String(); seen[n] || n == "" {
			t.Errorf("step class %d has name %q, empty or taken", c, n)
		} else {
			seen[n] = true
		}
	}
}
