package podutil

import (
	"path/filepath"
	"testing"
)

func TestLogDir(t *testing.T) {
	got := filepath.Join(LogDir("/srv/pods", "kube-system", "dns", "0b1c"), ContainerLogFile("coredns", 3))
	if want := "/srv/pods/kube-system_dns_0b1c/coredns/3.log"; got != want {
		t.Errorf("log file %q, want %q", got, want)
	}
}
