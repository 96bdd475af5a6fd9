package podsource

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: app
    image: nginx:1.27
`

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},
"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}`

var testNow = time.Date(2026, 11, 22, 19, 0, 0, 123, time.UTC)

func fileOrigin(path string) origin {
	return origin{source: podutil.FileSource, location: path, nodeName: "Node1", now: testNow}
}

func mustLoad(t *testing.T, data string, o origin) []*corev1.Pod {
	t.Helper()
	d, err := newManifestDecoder()
	if err != nil {
		t.Fatal(err)
	}
	pods, _, err := loadManifest(d, []byte(data), o)
	if err != nil {
		t.Fatalf("loadManifest: %v", err)
	}
	return pods
}

func TestLoadManifestStaticPodFields(t *testing.T) {
	pod := mustLoad(t, podYAML, fileOrigin("/etc/kubernetes/manifests/web.yaml"))[0]
	if pod.Name != "web-node1" || pod.Namespace != "default" || pod.Spec.NodeName != "Node1" {
		t.Errorf("name/namespace/nodeName = %q/%q/%q", pod.Name, pod.Namespace, pod.Spec.NodeName)
	}
	if len(pod.UID) != 32 {
		t.Errorf("UID %q: want 32 hex characters", pod.UID)
	}
	wantAnn := map[string]string{
		podutil.ConfigHashAnnotation:   string(pod.UID),
		podutil.ConfigSourceAnnotation: podutil.FileSource,
		podutil.ConfigSeenAnnotation:   "2026-11-22T19:00:00.000000123Z",
	}
	if diff := cmp.Diff(wantAnn, pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	wantTol := []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	if diff := cmp.Diff(wantTol, pod.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %q, want Pending", pod.Status.Phase)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("API defaults not applied: restartPolicy %q", pod.Spec.RestartPolicy)
	}
	if !podutil.IsStatic(pod) || podutil.IsMirror(pod) || podutil.FullName(pod) != "web-node1_default" {
		t.Errorf("helpers: static %v mirror %v full name %q", podutil.IsStatic(pod), podutil.IsMirror(pod), podutil.FullName(pod))
	}
}

func TestLoadManifestUID(t *testing.T) {
	path := "/m/web.yaml"
	base := mustLoad(t, podYAML, fileOrigin(path))[0].UID
	later := fileOrigin(path)
	later.now = testNow.Add(time.Hour)
	otherNode := fileOrigin(path)
	otherNode.nodeName = "node2"
	url := origin{source: podutil.HTTPSource, location: path, nodeName: "Node1", now: testNow}
	tests := []struct {
		name string
		data string
		o    origin
		same bool
	}{
		{"same content later", podYAML, later, true},
		{"same pod in JSON", podJSON, fileOrigin(path), true},
		{"changed content", strings.Replace(podYAML, "1.27", "1.28", 1), fileOrigin(path), false},
		{"other path", podYAML, fileOrigin("/m/web2.yaml"), false},
		{"other node", podYAML, otherNode, false},
		{"url source", podYAML, url, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid := mustLoad(t, tt.data, tt.o)[0].UID
			if (uid == base) != tt.same {
				t.Errorf("UID %q vs base %q: want same=%v", uid, base, tt.same)
			}
		})
	}
	withUID := strings.Replace(podYAML, "  name: web\n", "  name: web\n  uid: fixed-uid\n", 1)
	if uid := mustLoad(t, withUID, fileOrigin(path))[0].UID; uid != "fixed-uid" {
		t.Errorf("manifest UID not kept: %q", uid)
	}
}

func TestLoadManifestPodList(t *testing.T) {
	list := `apiVersion: v1
kind: PodList
items:
- metadata: {name: a}
  spec: {containers: [{name: c, image: i:1}]}
- metadata: {name: b, namespace: kube-system}
  spec: {containers: [{name: c, image: i:1}]}
`
	o := origin{source: podutil.HTTPSource, location: "http://x/pods", nodeName: "n", now: testNow}
	pods := mustLoad(t, list, o)
	var names []string
	for _, p := range pods {
		names = append(names, podutil.FullName(p))
		if len(p.Spec.Tolerations) != 0 {
			t.Errorf("pod %s: URL pods get no toleration, got %v", p.Name, p.Spec.Tolerations)
		}
		if p.Annotations[podutil.ConfigSourceAnnotation] != podutil.HTTPSource {
			t.Errorf("pod %s: source %q", p.Name, p.Annotations[podutil.ConfigSourceAnnotation])
		}
	}
	if diff := cmp.Diff([]string{"a-n_default", "b-n_kube-system"}, names); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if pods[0].UID == pods[1].UID {
		t.Errorf("list items share UID %q", pods[0].UID)
	}
}

func TestLoadManifestErrors(t *testing.T) {
	d, err := newManifestDecoder()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data string
		o          origin
		wantErr    string
	}{
		{"empty", "  \n", fileOrigin("/m/a"), "empty manifest"},
		{"not yaml", "{{{", fileOrigin("/m/a"), "decode manifest"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", fileOrigin("/m/a"), "Kind"},
		{"other kind", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n", fileOrigin("/m/a"), "expected a v1 Pod"},
		{"list from a file", "apiVersion: v1\nkind: PodList\nitems: []\n", fileOrigin("/m/a"), "PodList is not allowed"},
		{"no name", "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}\n", fileOrigin("/m/a"), "metadata.name"},
		{"invalid pod", strings.Replace(podYAML, "name: app", "name: App", 1), fileOrigin("/m/a"), "spec.containers[0].name"},
		{"one invalid list item", "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: []}\n",
			origin{source: podutil.HTTPSource, location: "u", nodeName: "n"}, "spec.containers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, _, err := loadManifest(d, []byte(tt.data), tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if pods != nil {
				t.Errorf("pods = %v, want none", pods)
			}
		})
	}
}

func TestLoadManifestUnknownFieldWarns(t *testing.T) {
	d, err := newManifestDecoder()
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Replace(podYAML, "  - name: app\n", "  - name: app\n    imagee: typo\n", 1)
	pods, warnings, err := loadManifest(d, []byte(data), fileOrigin("/m/a"))
	if err != nil || len(pods) != 1 {
		t.Fatalf("loadManifest = %d pods, %v", len(pods), err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "imagee") {
		t.Errorf("warnings = %q, want one naming imagee", warnings)
	}
}
