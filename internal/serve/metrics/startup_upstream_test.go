package metrics

import (
	"go/ast"
	"go/token"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestStatelessVolumesMatchUpstream pins the volume types that leave a pod
// in the startup SLI to upstream's isStatefulPod: a pod with one volume of
// each type upstream checks with volume.X == nil is stateless for berth,
// and a hostPath pod is not.
func TestStatelessVolumesMatchUpstream(t *testing.T) {
	fn := upstreamsrc.New(t).Func("k8s.io/kubernetes/pkg/kubelet/util", "isStatefulPod")
	var stateless []string
	ast.Inspect(fn.Node, func(n ast.Node) bool {
		be, ok := n.(*ast.BinaryExpr)
		if !ok || be.Op != token.EQL {
			return true
		}
		if sel, ok := be.X.(*ast.SelectorExpr); ok {
			if id, ok := be.Y.(*ast.Ident); ok && id.Name == "nil" {
				stateless = append(stateless, sel.Sel.Name)
			}
		}
		return true
	})
	if len(stateless) < 4 {
		t.Fatalf("upstream isStatefulPod checks %v: its shape changed, update the test", stateless)
	}
	for _, name := range stateless {
		var src corev1.VolumeSource
		f := reflect.ValueOf(&src).Elem().FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Pointer {
			t.Fatalf("upstream checks volume.%s, not a volume source of corev1", name)
		}
		f.Set(reflect.New(f.Type().Elem()))
		pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: src}}}}
		if stateful(pod) {
			t.Errorf("a pod with a %s volume is stateful for berth, stateless for upstream", name)
		}
	}
	hostPath := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}}
	if !stateful(hostPath) {
		t.Error("a hostPath pod is stateless for berth")
	}
}
