package cpumanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/node/topology"
)

func TestParseOptions(t *testing.T) {
	beta := topology.Gates{BetaOptions: true}
	tests := []struct {
		name    string
		opts    map[string]string
		gates   topology.Gates
		want    Options
		wantErr string
	}{
		{name: "none"},
		{name: "stable options", opts: map[string]string{"full-pcpus-only": "true", "strict-cpu-reservation": "true"},
			want: Options{FullPhysicalCPUsOnly: true, StrictCPUReservation: true}},
		{name: "false is off", opts: map[string]string{"full-pcpus-only": "false"}},
		{name: "unknown", opts: map[string]string{"x": "true"}, wantErr: `unknown CPU Manager Policy option: "x"`},
		{name: "bad value", opts: map[string]string{"full-pcpus-only": "yes"}, wantErr: `bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax`},
		{name: "alpha without its gate", opts: map[string]string{"distribute-cpus-across-cores": "true"}, gates: beta,
			wantErr: `CPU Manager Policy Alpha-level Options not enabled, but option "distribute-cpus-across-cores" provided`},
		{name: "alpha with its gate", opts: map[string]string{"distribute-cpus-across-cores": "true"}, gates: topology.Gates{AlphaOptions: true},
			want: Options{DistributeCPUsAcrossCores: true}},
		{name: "beta without its gate", opts: map[string]string{"distribute-cpus-across-numa": "true"},
			wantErr: `CPU Manager Policy Beta-level Options not enabled, but option "distribute-cpus-across-numa" provided`},
		{name: "exclusive pair", opts: map[string]string{"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"}, gates: topology.Gates{AlphaOptions: true},
			wantErr: "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time"},
		{name: "not implemented", opts: map[string]string{"distribute-cpus-across-numa": "true"}, gates: beta,
			wantErr: `cpu manager policy option "distribute-cpus-across-numa" is not implemented by berth yet`},
		{name: "not implemented but off", opts: map[string]string{"prefer-align-cpus-by-uncorecache": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOptions(tt.opts, tt.gates)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseOptions error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseOptions (-want +got):\n%s", d)
			}
		})
	}
}
