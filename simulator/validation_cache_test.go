package simulator

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidateLabelsAnswersAsApimachinery: validateLabels, which skips
// label sets whose every key and value was found valid before, answers
// exactly as ValidateLabels over random sets of valid and invalid keys and
// values, mixed and asked again.
func TestValidateLabelsAnswersAsApimachinery(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 7))
	keys := []string{"app", "ray.io/cluster", "example.com/tier", "x_y", "-bad", "bad/", "UPPER/x", "a/b/c", ""}
	values := []string{"web", "", "a-b.c_d", "ok1", "-bad", "bad-", "with space", "0123456789012345678901234567890123456789012345678901234567890123"}
	// Mostly the first four (valid), sometimes any.
	pick := func(from []string) string {
		if r.IntN(10) == 0 {
			return from[r.IntN(len(from))]
		}
		return from[r.IntN(4)]
	}
	path := field.NewPath("metadata", "labels")
	skipped, invalid := 0, 0
	for i := 0; i < 5000; i++ {
		l := map[string]string{}
		for n := r.IntN(3); n >= 0; n-- {
			l[pick(keys)] = pick(values)
		}
		known := labelsKnownValid(l)
		got, want := validateLabels(l, path), metav1validation.ValidateLabels(l, path)
		if len(got) == 0 && len(want) == 0 {
			if known {
				skipped++
			}
			continue
		}
		invalid++
		// Both list the errors in the map's order: compare them as sets.
		if !reflect.DeepEqual(errorTexts(got), errorTexts(want)) {
			t.Fatalf("labels %q: validateLabels %v, ValidateLabels %v", l, got, want)
		}
	}
	if skipped < 500 || invalid < 500 {
		t.Fatalf("%d valid sets answered from what was found before, %d invalid ones: both paths must be exercised", skipped, invalid)
	}
}

func errorTexts(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	slices.Sort(out)
	return out
}
