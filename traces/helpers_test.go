package traces

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// xssName is an object name that is markup if the viewer ever treats data
// as HTML.
const xssName = "<img src=x onerror=alert(1)>"

func configMap(name, rv string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv},
		Data:       data,
	}
}

// sampleHistory is a small run: a user creates a ConfigMap, the controller
// updates it, a stale apiserver serves an old version to the restarted
// controller, which deletes it; a ConfigMap with a hostile name is written
// too.
func sampleHistory() *model.History {
	ctrl := model.ControllerActor("zk")
	evs := []model.Event{
		{Actor: model.ActorUser, Op: model.OpCreate, Kind: "ConfigMap", Namespace: "default", Name: "zk", Server: 1, HeadRev: 1, Rev: 2, Change: model.ChangeAdded, Detail: "seed", Object: configMap("zk", "2", map[string]string{"members": "1"})},
		{Actor: model.ActorUser, Op: model.OpCreate, Kind: "ConfigMap", Namespace: "default", Name: xssName, Server: 1, HeadRev: 2, Rev: 3, Change: model.ChangeAdded, Detail: "<b>bold</b> & \"quoted\"", Object: configMap(xssName, "3", map[string]string{"html": "<script>alert(2)</script>"})},
		{Actor: ctrl, Op: model.OpReconcile, Kind: "ConfigMap", Namespace: "default", Name: "zk", Time: 1000},
		{Actor: ctrl, Op: model.OpGet, Kind: "ConfigMap", Namespace: "default", Name: "zk", Server: 1, ReadRev: 3, HeadRev: 3, Rev: 2, Time: 1000},
		{Actor: ctrl, Op: model.OpUpdate, Kind: "ConfigMap", Namespace: "default", Name: "zk", Server: 1, HeadRev: 3, Rev: 4, Change: model.ChangeModified, Time: 1000, Object: configMap("zk", "4", map[string]string{"members": "3"})},
		{Actor: model.ActorFault, Op: model.OpPauseCache, Kind: "ConfigMap", Server: 2, ReadRev: 1, HeadRev: 4, Time: 1500},
		{Actor: model.ActorFault, Op: model.OpCrash, Name: string(ctrl), Detail: "mid-reconcile", Time: 2000},
		{Actor: model.ActorFault, Op: model.OpRestart, Name: string(ctrl), Detail: "to apiserver-2", Time: 2000},
		{Actor: ctrl, Op: model.OpList, Kind: "ConfigMap", Namespace: "default", Server: 2, ReadRev: 2, HeadRev: 4, Stale: true, Versions: []model.Version{{Name: "default/zk", Rev: 2}}, Time: 2500},
		{Actor: ctrl, Op: model.OpGet, Kind: "ConfigMap", Namespace: "default", Name: "zk", Server: 2, ReadRev: 2, HeadRev: 4, Rev: 2, Stale: true, Time: 2500},
		{Actor: ctrl, Op: model.OpDelete, Kind: "ConfigMap", Namespace: "default", Name: "zk", Server: 2, HeadRev: 4, Rev: 5, Change: model.ChangeDeleted, Time: 2500, Object: configMap("zk", "5", map[string]string{"members": "3"})},
		{Actor: ctrl, Op: model.OpReconcileDone, Kind: "ConfigMap", Namespace: "default", Name: "zk", Err: "Conflict: the object has been modified", Detail: "requeue with backoff", Time: 2500},
		{Actor: model.ActorClock, Op: model.OpTick, Time: 3000},
		{Actor: ctrl, Op: model.OpPanic, Kind: "ConfigMap", Namespace: "default", Name: "zk", Err: "panic: boom", Detail: "panic: boom\n\tzk/reconciler.go:42\n{braces} # hash \"quotes\" ünïcødé", Time: 3000},
	}
	for i := range evs {
		evs[i].Step = i + 1
	}
	return &model.History{Events: evs}
}

func sampleViolation(h *model.History) *properties.Violation {
	return &properties.Violation{
		Property:    "NoDeleteOfLive(ConfigMap)",
		Statement:   "a controller never deletes a ConfigMap the cluster still needs",
		Step:        11,
		Event:       h.Events[10],
		Explanation: "controller/zk deleted default/zk at rev 5\nit decided from a stale read at step 10 (cache at rev 2, store at rev 4)\n",
		Related:     []int{9, 10},
	}
}

func sampleChoices() []model.Choice {
	var cs []model.Choice
	for i := 0; i < 45; i++ {
		cs = append(cs, model.Choice{Kind: model.ChooseStep, N: 7, Value: i % 7})
	}
	cs = append(cs, model.Choice{Kind: model.ChooseStep, N: 2, Value: 1}, model.Choice{Kind: model.ChooseStep, N: 100, Value: 42})
	return cs
}

func sampleTrace(t *testing.T) (*Trace, *model.History) {
	t.Helper()
	h := sampleHistory()
	tr := FromRun("zookeeper/buggy", model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1}, sampleChoices(), h, sampleViolation(h))
	if err := tr.Validate(); err != nil {
		t.Fatalf("sample trace invalid: %v", err)
	}
	return tr, h
}
