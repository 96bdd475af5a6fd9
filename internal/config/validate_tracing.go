package config

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	tracingapi "k8s.io/component-base/tracing/api/v1"
)

// validateTracing checks tracing as upstream's kubelet does, with
// component-base's ValidateTracingConfiguration: samplingRatePerMillion
// from 0 to one million, an endpoint that parses as a URL. (Its feature
// gate argument is unused; KubeletTracing is GA and locked on.)
func validateTracing(c *tracingapi.TracingConfiguration) []problem {
	var ps []problem
	for _, e := range tracingapi.ValidateTracingConfiguration(c, featuregate.NewFeatureGate(), field.NewPath("tracing")) {
		ps = append(ps, fieldProblem(e.Field, "%s", e.ErrorBody()))
	}
	return ps
}
