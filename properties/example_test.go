package properties_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// LabelledWrites is a user-defined safety property: every ConfigMap a
// controller writes carries the label app.
func LabelledWrites() properties.Property {
	return properties.Property{
		Name:      "LabelledWrites(ConfigMap)",
		Statement: "a controller never writes a ConfigMap without the label app",
		Kind:      properties.Safety,
		NewMonitor: func() properties.Monitor {
			return properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
				if !properties.IsController(e.Actor) || e.Kind != "ConfigMap" || e.Change == model.ChangeNone {
					return nil
				}
				cm, ok := e.Object.(*corev1.ConfigMap)
				if !ok || cm.Labels["app"] != "" {
					return nil
				}
				before := "did not exist"
				if _, existed := s.Get("ConfigMap", e.Namespace, e.Name); existed {
					before = "existed"
				}
				return &properties.Violation{
					Step:        e.Step,
					Event:       *e,
					Explanation: fmt.Sprintf("%s wrote ConfigMap %s without label app (before the write it %s)", e.Actor, e.Key(), before),
				}
			})
		},
	}
}

func Example() {
	h := &model.History{Events: []model.Event{
		{Step: 1, Actor: "controller/zk", Op: model.OpCreate, Kind: "ConfigMap", Namespace: "default", Name: "zk-config",
			Rev: 1, Change: model.ChangeAdded, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: "default", Name: "zk-config", ResourceVersion: "1", Labels: map[string]string{"app": "zk"}}}},
		{Step: 2, Actor: "controller/zk", Op: model.OpUpdate, Kind: "ConfigMap", Namespace: "default", Name: "zk-config",
			HeadRev: 1, Rev: 2, Change: model.ChangeModified, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: "default", Name: "zk-config", ResourceVersion: "2"}}},
	}}
	for _, v := range properties.Check(h, LabelledWrites(), properties.NoReconcilePanic()) {
		fmt.Println(v.String())
	}
	// Output:
	// LabelledWrites(ConfigMap): a controller never writes a ConfigMap without the label app
	//   at step 2: controller/zk Update ConfigMap default/zk-config -> rv=2 modified t=0s #2
	//   controller/zk wrote ConfigMap default/zk-config without label app (before the write it existed)
}
