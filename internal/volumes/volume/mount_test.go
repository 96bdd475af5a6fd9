package volume

import "testing"

func TestIsMountPointIn(t *testing.T) {
	info := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
95 22 0:50 / /var/lib/berth/pods/u/volumes/kubernetes.io~secret/s rw,relatime - tmpfs tmpfs rw,size=1024k
96 22 0:51 / /var/lib/with\040space rw - tmpfs tmpfs rw
`
	tests := []struct {
		path string
		want bool
	}{
		{path: "/var/lib/berth/pods/u/volumes/kubernetes.io~secret/s", want: true},
		{path: "/var/lib/berth/pods/u/volumes/kubernetes.io~secret/s/", want: true},
		{path: "/var/lib/berth/pods/u/volumes/kubernetes.io~secret", want: false},
		{path: "/var/lib/with space", want: true},
		{path: "/", want: true},
	}
	for _, tt := range tests {
		if got := isMountPointIn(info, tt.path); got != tt.want {
			t.Errorf("isMountPointIn(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	if got := tmpfsOptions(1 << 20); got != "size=1048576" {
		t.Errorf("tmpfsOptions() = %q", got)
	}
}
