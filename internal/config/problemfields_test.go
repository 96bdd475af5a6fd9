package config

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidationErrorFields(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "fields, fields set by flags, and flags", args: []string{
			"--config=testdata/minimal.yaml", "--read-only-port=-1", "--max-pods=-1", "--node-ip=10.0.0.5,10.0.0.6",
		}, want: []string{"--node-ip", "maxPods", "readOnlyPort"}},
		{name: "one field with two problems is listed once", args: []string{
			"--config=testdata/minimal.yaml", "--cluster-dns=a,b", "--cluster-domain=Not_Valid",
		}, want: []string{"clusterDNS", "clusterDomain"}},
		{name: "an unsafe sysctl upstream refuses", args: []string{
			"--config=testdata/minimal.yaml", "--allowed-unsafe-sysctls=net.core.somaxconn,vm.swappiness",
		}, want: []string{"allowedUnsafeSysctls"}},
		{name: "a subject that is neither", args: nil, want: []string{"node name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hostname := "host"
			if tc.args == nil {
				hostname = ""
			}
			_, err := Load(context.Background(), parseFlags(t, tc.args), testEnv(hostname))
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Load = %v, want a *ValidationError", err)
			}
			if diff := cmp.Diff(tc.want, verr.Fields()); diff != "" {
				t.Errorf("Fields() (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}
