package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/utils/ptr"
)

func TestValidateTracing(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *tracingapi.TracingConfiguration
		want []string
	}{
		{name: "unset"},
		{name: "empty", c: &tracingapi.TracingConfiguration{}},
		{name: "endpoint and rate", c: &tracingapi.TracingConfiguration{Endpoint: ptr.To("otel-collector:4317"), SamplingRatePerMillion: ptr.To[int32](1000000)}},
		{name: "negative rate", c: &tracingapi.TracingConfiguration{SamplingRatePerMillion: ptr.To[int32](-1)},
			want: []string{`kubeletConfiguration field "tracing.samplingRatePerMillion": Invalid value: -1: sampling rate must be positive`}},
		{name: "rate over a million", c: &tracingapi.TracingConfiguration{SamplingRatePerMillion: ptr.To[int32](1000001)},
			want: []string{`kubeletConfiguration field "tracing.samplingRatePerMillion": Invalid value: 1000001: sampling rate per million must be less than or equal to one million`}},
		{name: "bad endpoint", c: &tracingapi.TracingConfiguration{Endpoint: ptr.To("dns:///%%")},
			want: []string{`kubeletConfiguration field "tracing.endpoint": Invalid value: "dns:///%%": parse "dns:///%%": invalid URL escape "%%"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problemMsgs(validateTracing(tc.c))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
