package csi

import (
	"strings"
	"testing"
)

func TestHighestVersion(t *testing.T) {
	for _, tc := range []struct {
		versions []string
		want     string
		wantErr  string
	}{
		{versions: []string{"1.0.0"}, want: "1.0.0"},
		{versions: []string{"0.3.0", "1.0.0"}, want: "1.0.0"},
		{versions: []string{"1.2.0", "1.10.0", "2.0.0"}, want: "1.10.0"},
		{versions: []string{"v1.5.0", "junk"}, want: "1.5.0"},
		{versions: []string{"0.3.0"}, wantErr: `kubernetes.io/csi: RegisterPlugin for CSI driver "d" failed. None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x`},
		{versions: []string{"2.0.0"}, wantErr: `kubernetes.io/csi: RegisterPlugin for CSI driver "d" failed. None of the versions specified ["2.0.0"] are supported. err=could not find a highest supported version`},
		{wantErr: `kubernetes.io/csi: RegisterPlugin for CSI driver "d" failed. Plugin returned an empty list for supported versions`},
	} {
		v, err := highestVersion("RegisterPlugin", "d", tc.versions)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("highestVersion(%q) = %v, %v; want an error starting %q", tc.versions, v, err, tc.wantErr)
			}
			continue
		}
		if err != nil || v.String() != tc.want {
			t.Errorf("highestVersion(%q) = %v, %v; want %s", tc.versions, v, err, tc.want)
		}
	}
}
