package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOptions(t *testing.T) {
	def := Options{MaxAllowableNUMANodes: 8}
	for _, tt := range []struct {
		name    string
		in      map[string]string
		want    Options
		wantErr string
	}{
		{name: "none", want: def},
		{name: "prefer closest", in: map[string]string{"prefer-closest-numa-nodes": "true"}, want: Options{PreferClosestNUMA: true, MaxAllowableNUMANodes: 8}},
		{name: "prefer closest not a bool", in: map[string]string{"prefer-closest-numa-nodes": "yes"}, want: def,
			wantErr: `bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": invalid syntax`},
		{name: "max allowable", in: map[string]string{"max-allowable-numa-nodes": "16"}, want: Options{MaxAllowableNUMANodes: 16}},
		{name: "max allowable below default", in: map[string]string{"max-allowable-numa-nodes": "4"}, want: def,
			wantErr: `the minimum value of "max-allowable-numa-nodes" should not be less than 8`},
		{name: "max allowable not an int", in: map[string]string{"max-allowable-numa-nodes": "x"}, want: def,
			wantErr: `unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing "x": invalid syntax`},
		{name: "unknown", in: map[string]string{"spread": "true"}, want: def, wantErr: `unknown Topology Manager Policy option: "spread"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOptions(tt.in, Gates{})
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}
