package volume

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func hugePagesPod(requests ...string) *corev1.Pod {
	pod := testPod()
	list := corev1.ResourceList{}
	for _, r := range requests {
		list[corev1.ResourceName(corev1.ResourceHugePagesPrefix+r)] = resource.MustParse("4Mi")
	}
	pod.Spec.Containers[0].Resources.Requests = list
	return pod
}

// TestHugePageSize pins upstream's getPageSizeMountOption: the size from
// the medium or the pod's one requested size, and its refusals.
func TestHugePageSize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		medium corev1.StorageMedium
		pod    *corev1.Pod
		want   string
		err    string
	}{
		{"one size", corev1.StorageMediumHugePages, hugePagesPod("2Mi"), "2Mi", ""},
		{"sized medium", "HugePages-1Gi", hugePagesPod("2Mi", "1Gi"), "1Gi", ""},
		{"several sizes", corev1.StorageMediumHugePages, hugePagesPod("2Mi", "1Gi"), "",
			"medium: HugePages can't be used if container requests multiple huge page sizes"},
		{"no request", corev1.StorageMediumHugePages, hugePagesPod(), "",
			"medium HugePages: hugePages storage requested, but there is no resource request for huge pages"},
		{"no request of the size", "HugePages-1Gi", hugePagesPod("2Mi"), "",
			"medium HugePages-1Gi: hugePages storage requested, but there is no resource request for huge pages"},
	} {
		got, err := hugePageSize(tc.medium, tc.pod)
		if got != tc.want || errString(err) != tc.err {
			t.Errorf("%s: hugePageSize() = %q, %v; want %q, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestHugePagesEmptyDir: an emptyDir of medium HugePages is a hugetlbfs,
// mounted once.
func TestHugePagesEmptyDir(t *testing.T) {
	e := newEnv(t)
	pod := hugePagesPod("2Mi")
	pod.Spec.Volumes = []corev1.Volume{{Name: "huge", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "huge", MountPath: "/huge"}}
	for range 2 {
		if _, err := e.m.SetUp(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~empty-dir", "huge")
	if got := e.mounter.snapshot(); len(got) != 1 || got[dir] != -3 {
		t.Errorf("mounts = %v, want a hugetlbfs at %s", got, dir)
	}
}

// TestHugePageWordsMatchUpstream pins hugePageSize's refusals to the
// format strings of upstream's getPageSizeMountOption, and the mount
// option's name.
func TestHugePageWordsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/volume/emptydir"
	lits := src.Func(pkg, "getPageSizeMountOption").StringLiterals()
	for _, want := range []string{
		"medium: %s can't be used if container requests multiple huge page sizes",
		"medium %s: hugePages storage requested, but there is no resource request for huge pages",
		"%s=%s",
	} {
		if !slices.Contains(lits, want) {
			t.Errorf("upstream's getPageSizeMountOption lacks %q (its literals: %q)", want, lits)
		}
	}
	if got := src.Value(pkg, "hugePagesPageSizeMountOption").AsString(); got != "pagesize" {
		t.Errorf("upstream's page size mount option is %q, berth mounts with pagesize=", got)
	}
}
