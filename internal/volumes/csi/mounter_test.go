package csi

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

// request returns the request of the only call of method.
func request[T any](t *testing.T, drv *csifake.Driver, method string) T {
	t.Helper()
	calls := drv.CallsTo(method)
	if len(calls) != 1 {
		t.Fatalf("%d calls of %s, want 1 (calls: %v)", len(calls), method, drv.Methods())
	}
	return calls[0].Request.(T)
}

func mountCap(fsType string, flags []string, mode csipb.VolumeCapability_AccessMode_Mode, group string) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: fsType, MountFlags: flags, VolumeMountGroup: group}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

// TestSetUpStagesThenPublishes: a persistent volume of an attachable
// driver with pod information, tokens and secrets is staged, then
// published, with every field as upstream sends it.
func TestSetUpStagesThenPublishes(t *testing.T) {
	driver := csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.PodInfoOnMount = ptr.To(true)
		s.TokenRequests = []storagev1.TokenRequest{{Audience: "vault", ExpirationSeconds: ptr.To(int64(3600))}, {Audience: ""}}
	})
	e := newMounterEnv(t, stageCaps(), driver,
		attachment(testHandle, true, map[string]string{"devicePath": "/dev/sdb"}),
		secret("kube-system", "stage", map[string]string{"stage-key": "s"}),
		secret("kube-system", "publish", map[string]string{"publish-key": "p"}))
	pod := testPod(testPodUID)

	pub, err := e.m.SetUp(testContext(t), pod, testPV())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodeStageVolume", "NodePublishVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	publishContext := map[string]string{"devicePath": "/dev/sdb"}
	wantStage := &csipb.NodeStageVolumeRequest{
		VolumeId:          testHandle,
		PublishContext:    publishContext,
		StagingTargetPath: e.staging(testHandle),
		VolumeCapability:  mountCap("ext4", []string{"noatime"}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, ""),
		Secrets:           map[string]string{"stage-key": "s"},
		VolumeContext:     map[string]string{"attr": "value"},
	}
	if diff := cmp.Diff(wantStage, request[*csipb.NodeStageVolumeRequest](t, e.drv, "NodeStageVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodeStageVolume (-want +got):\n%s", diff)
	}
	tokens, _ := json.Marshal(map[string]authenticationv1.TokenRequestStatus{
		"vault": tokenStatus("token-for-vault"), "": tokenStatus("token-for-"),
	})
	wantPublish := &csipb.NodePublishVolumeRequest{
		VolumeId:          testHandle,
		PublishContext:    publishContext,
		StagingTargetPath: e.staging(testHandle),
		TargetPath:        e.target(testPodUID, testPVName),
		VolumeCapability:  mountCap("ext4", []string{"noatime"}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, ""),
		Secrets:           map[string]string{"publish-key": "p"},
		VolumeContext: map[string]string{
			"attr":                                     "value",
			"csi.storage.k8s.io/pod.name":              "web-" + testPodUID,
			"csi.storage.k8s.io/pod.namespace":         testPodNS,
			"csi.storage.k8s.io/pod.uid":               testPodUID,
			"csi.storage.k8s.io/serviceAccount.name":   "sa",
			"csi.storage.k8s.io/ephemeral":             "false",
			"csi.storage.k8s.io/serviceAccount.tokens": string(tokens),
		},
	}
	if diff := cmp.Diff(wantPublish, request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodePublishVolume (-want +got):\n%s", diff)
	}
	wantTokens := []*authenticationv1.TokenRequest{tokenRequestFor(pod, []string{"vault"}, ptr.To(int64(3600))), tokenRequestFor(pod, []string{}, nil)}
	if diff := cmp.Diff(wantTokens, tokenRequests(e)); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	if !pub.ApplyFSGroup {
		t.Error("ApplyFSGroup false for an ext4 ReadWriteOnce volume under ReadWriteOnceWithFSType: the kubelet applies the fsGroup")
	}
	if !exists(t, e.staging(testHandle)) {
		t.Errorf("staging directory %s not made", e.staging(testHandle))
	}
	if got, want := TargetDir(e.podsDir(), pod.UID, testPVName), e.target(testPodUID, testPVName); got != want {
		t.Errorf("TargetDir = %s, want %s", got, want)
	}
	if e.m.locks.len() != 0 {
		t.Errorf("%d volume locks left", e.m.locks.len())
	}
}

func tokenStatus(token string) authenticationv1.TokenRequestStatus {
	return authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(testTokenExpiry)}
}

func tokenRequestFor(pod *corev1.Pod, audiences []string, exp *int64) *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: audiences, ExpirationSeconds: exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
}

// tokenRequests are the TokenRequests sent for service account sa.
func tokenRequests(e *mounterEnv) []*authenticationv1.TokenRequest {
	var out []*authenticationv1.TokenRequest
	for _, a := range e.client.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && ca.GetSubresource() == "token" && ca.GetResource().Resource == "serviceaccounts" {
			if ca.GetNamespace() == testPodNS && ca.(k8stesting.CreateActionImpl).Name == "sa" {
				out = append(out, ca.GetObject().(*authenticationv1.TokenRequest))
			}
		}
	}
	return out
}

// TestVolDataFiles pins the files upstream's kubelet reads to tear a
// volume down: keys and values beside the target and the staging
// directory.
func TestVolDataFiles(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }),
		secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"specVolID":           testPVName,
		"volumeHandle":        testHandle,
		"driverName":          testDriver,
		"nodeName":            testNode,
		"volumeLifecycleMode": "Persistent",
		"attachmentID":        fmt.Sprintf("csi-%x", sha256.Sum256([]byte(testHandle+testDriver+testNode))),
	}
	if diff := cmp.Diff(want, readVolData(t, filepath.Dir(e.target(testPodUID, testPVName)))); diff != "" {
		t.Errorf("target's vol_data.json (-want +got):\n%s", diff)
	}
	wantStage := map[string]string{"driverName": testDriver, "volumeHandle": testHandle}
	if diff := cmp.Diff(wantStage, readVolData(t, filepath.Dir(e.staging(testHandle)))); diff != "" {
		t.Errorf("staging vol_data.json (-want +got):\n%s", diff)
	}
}

// TestSetUpInline: an inline volume is published only (never staged nor
// waited for), under upstream's handle, with its secret from the pod's
// namespace and ephemeral "true".
func TestSetUpInline(t *testing.T) {
	driver := csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.PodInfoOnMount = ptr.To(true)
		s.FSGroupPolicy = ptr.To(storagev1.FileFSGroupPolicy)
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	})
	caps := append(stageCaps(), csipb.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER)
	e := newMounterEnv(t, caps, driver, secret(testPodNS, "creds", map[string]string{"k": "v"}))
	v := Volume{SpecName: "scratch", Driver: testDriver, Handle: "ignored", Inline: true, ReadOnly: true,
		Attributes:    map[string]string{"size": "1Gi"},
		PublishSecret: &corev1.SecretReference{Namespace: "elsewhere", Name: "creds"}}
	pub, err := e.m.SetUp(testContext(t), testPod(testPodUID), v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NodeGetCapabilities", "NodePublishVolume"}, e.drv.Methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	handle := fmt.Sprintf("csi-%x", sha256.Sum256([]byte(testPodUID+"scratch")))
	want := &csipb.NodePublishVolumeRequest{
		VolumeId:         handle,
		TargetPath:       e.target(testPodUID, "scratch"),
		VolumeCapability: mountCap("", nil, csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER, ""),
		Readonly:         true,
		Secrets:          map[string]string{"k": "v"},
		VolumeContext: map[string]string{
			"size":                                   "1Gi",
			"csi.storage.k8s.io/pod.name":            "web-" + testPodUID,
			"csi.storage.k8s.io/pod.namespace":       testPodNS,
			"csi.storage.k8s.io/pod.uid":             testPodUID,
			"csi.storage.k8s.io/serviceAccount.name": "sa",
			"csi.storage.k8s.io/ephemeral":           "true",
		},
	}
	if diff := cmp.Diff(want, request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume"), protocmp.Transform()); diff != "" {
		t.Errorf("NodePublishVolume (-want +got):\n%s", diff)
	}
	data := readVolData(t, filepath.Dir(e.target(testPodUID, "scratch")))
	if data["volumeLifecycleMode"] != "Ephemeral" || data["volumeHandle"] != handle {
		t.Errorf("vol_data.json %v: want the Ephemeral mode and handle %s", data, handle)
	}
	for _, a := range e.client.Actions() {
		if a.GetResource().Resource == "volumeattachments" {
			t.Errorf("an inline volume's set-up read a VolumeAttachment: %v", a)
		}
	}
	if pub.ApplyFSGroup {
		t.Error("ApplyFSGroup true for a read-only volume")
	}
	if exists(t, filepath.Join(e.pluginsDir(), "kubernetes.io")) {
		t.Error("an inline volume was given a staging directory")
	}
}

// TestSetUpRefusesLifecycleMode: the lifecycle mode must be one the
// CSIDriver object lists; without an object, Persistent only. Nothing
// is called nor made.
func TestSetUpRefusesLifecycleMode(t *testing.T) {
	persistentOnly := csiDriver(nil)
	ephemeralOnly := csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	})
	inline := Volume{SpecName: "scratch", Driver: testDriver, Inline: true}
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		v       Volume
		want    string
	}{
		{"inline without a CSIDriver", nil, inline, `volume mode "Ephemeral" not supported by driver csi.example.com (no CSIDriver object)`},
		{"inline, Persistent only", []runtime.Object{persistentOnly}, inline, `volume mode "Ephemeral" not supported by driver csi.example.com (only supports ["Persistent"])`},
		{"persistent, Ephemeral only", []runtime.Object{ephemeralOnly}, testPV(), `volume mode "Persistent" not supported by driver csi.example.com (only supports ["Ephemeral"])`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMounterEnv(t, stageCaps(), tc.objects...)
			_, err := e.m.SetUp(testContext(t), testPod(testPodUID), tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SetUp error %v, want one saying %q", err, tc.want)
			}
			if calls := e.drv.Methods(); len(calls) != 0 {
				t.Errorf("driver called: %v", calls)
			}
			if exists(t, e.podsDir()) {
				t.Error("the pods directory was written to")
			}
		})
	}
}

// TestSetUpMissingDriver: a driver that is not registered is upstream's
// error, before anything is read or made.
func TestSetUpMissingDriver(t *testing.T) {
	e := newMounterEnv(t, stageCaps())
	v := testPV()
	v.Driver = "other.example.com"
	_, err := e.m.SetUp(testContext(t), testPod(testPodUID), v)
	want := "driver name other.example.com not found in the list of registered CSI drivers"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("SetUp error %v, want one saying %q", err, want)
	}
	if len(e.client.Actions()) != 0 || exists(t, e.podsDir()) {
		t.Errorf("API read (%v) or pods directory made", e.client.Actions())
	}
}

// TestSetUpRefusesUnsafeNames: names that would leave their directory.
func TestSetUpRefusesUnsafeNames(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), csiDriver(nil))
	for _, mod := range []func(*Volume){
		func(v *Volume) { v.SpecName = ".." },
		func(v *Volume) { v.SpecName = "" },
		func(v *Volume) { v.Driver = "../x" },
		func(v *Volume) { v.Handle = "" },
	} {
		v := testPV()
		mod(&v)
		if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), v); err == nil {
			t.Errorf("SetUp of %+v succeeded", v)
		}
	}
	if _, err := e.m.SetUp(testContext(t), testPod(".."), testPV()); err == nil {
		t.Error("SetUp for pod UID .. succeeded")
	}
	if len(e.drv.Methods()) != 0 || exists(t, e.podsDir()) {
		t.Errorf("driver called (%v) or pods directory made", e.drv.Methods())
	}
}

// TestSetUpVolumeMountGroup: a driver with VOLUME_MOUNT_GROUP gets the
// pod's fsGroup in stage and publish, and the kubelet leaves it alone.
func TestSetUpVolumeMountGroup(t *testing.T) {
	caps := append(stageCaps(), csipb.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP)
	e := newMounterEnv(t, caps, csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.AttachRequired = ptr.To(false)
		s.FSGroupPolicy = ptr.To(storagev1.FileFSGroupPolicy)
	}), secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	pub, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV())
	if err != nil {
		t.Fatal(err)
	}
	want := mountCap("ext4", []string{"noatime"}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, "2000")
	stage := request[*csipb.NodeStageVolumeRequest](t, e.drv, "NodeStageVolume")
	publish := request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume")
	if diff := cmp.Diff(want, stage.GetVolumeCapability(), protocmp.Transform()); diff != "" {
		t.Errorf("stage's capability (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, publish.GetVolumeCapability(), protocmp.Transform()); diff != "" {
		t.Errorf("publish's capability (-want +got):\n%s", diff)
	}
	if pub.ApplyFSGroup {
		t.Error("ApplyFSGroup true though the driver applies the fsGroup")
	}
}

// TestSetUpTokensInSecrets: serviceAccountTokenInSecrets moves the tokens
// from the volume context to the secrets.
func TestSetUpTokensInSecrets(t *testing.T) {
	e := newMounterEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) {
		s.AttachRequired = ptr.To(false)
		s.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}}
		s.ServiceAccountTokenInSecrets = ptr.To(true)
	}), secret("kube-system", "publish", map[string]string{"k": "v"}))
	if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV()); err != nil {
		t.Fatal(err)
	}
	publish := request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume")
	if _, ok := publish.GetVolumeContext()[keyTokens]; ok {
		t.Error("tokens in the volume context")
	}
	if tokens := publish.GetSecrets()[keyTokens]; !strings.Contains(tokens, `"vault":{"token":"token-for-vault"`) || publish.GetSecrets()["k"] != "v" {
		t.Errorf("secrets %v: want the publish secret and the tokens", publish.GetSecrets())
	}
}

// TestSetUpRefusesCSIDriverWithoutFSGroupPolicy: upstream's error for an
// object with no fsGroupPolicy (the API server always defaults one).
func TestSetUpRefusesCSIDriverWithoutFSGroupPolicy(t *testing.T) {
	e := newMounterEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) { s.FSGroupPolicy = nil }))
	_, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV())
	if want := "kubernetes.io/csi: expected valid fsGroupPolicy, received nil value or empty string"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("SetUp error %v, want one saying %q", err, want)
	}
}
