package simulator

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// NewScheme returns a scheme with client-go's built-in types and the types
// each add registers (your CRDs' AddToScheme). A registration error is a
// programming error in the types, so it panics.
func NewScheme(add ...func(*runtime.Scheme) error) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, f := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, add...) {
		if err := f(s); err != nil {
			panic("simulator.NewScheme: " + err.Error())
		}
	}
	return s
}
