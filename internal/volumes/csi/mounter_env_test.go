package csi

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

const (
	testPodUID  = "pod-uid-1"
	testHandle  = "vol-1"
	testPVName  = "pv-1"
	testPodNS   = "ns"
	testFSGroup = int64(2000)
)

// testTokenExpiry is when the tokens of tokenReactor expire.
var testTokenExpiry = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// mounterEnv is a Mounter over a fake driver registered as testDriver, a
// fake clientset and a fake clock that steps whenever something waits on
// it, with its plugins and pods directories in a temporary root.
type mounterEnv struct {
	m       *Mounter
	drv     *csifake.Driver
	drivers *Drivers
	client  *fake.Clientset
	clock   *clocktesting.FakeClock
	root    string
	// mountPoints are the paths IsMountPoint says are mount points.
	mountPoints map[string]bool
	// mounts logs the Mounter's binds and unmounts, each with the driver's
	// calls so far ("bind <source> <target> after [...]").
	mounts []string
	// notBlock makes IsBlockDevice say no.
	notBlock bool
}

func newMounterEnv(t *testing.T, caps []csipb.NodeServiceCapability_RPC_Type, objects ...runtime.Object) *mounterEnv {
	t.Helper()
	drv, endpoint := startDriver(t, csifake.Config{Name: testDriver, NodeID: "n1", Capabilities: caps})
	e := &mounterEnv{
		drv: drv, drivers: &Drivers{}, client: fake.NewClientset(objects...),
		clock: clocktesting.NewFakeClock(time.Unix(0, 0)), root: t.TempDir(), mountPoints: map[string]bool{},
	}
	if err := e.drivers.add("test", testDriver, Driver{Endpoint: endpoint, Version: utilversion.MustParseGeneric("1.10.0")}); err != nil {
		t.Fatal(err)
	}
	e.client.PrependReactor("create", "serviceaccounts", tokenReactor)
	m, err := NewMounter(MounterConfig{
		Drivers: e.drivers, Client: e.client, NodeName: testNode, Clock: e.clock,
		PluginsDir: filepath.Join(e.root, "plugins"), PodsDir: filepath.Join(e.root, "pods"),
		IsMountPoint: e.isMountPoint,
		Block: BlockHost{
			BindMount: e.bindMount, Unmount: e.unmount,
			IsBlockDevice: func(path string) (bool, error) {
				if _, err := os.Stat(path); err != nil {
					return false, err
				}
				return !e.notBlock, nil
			},
			AttachLoop: func(path string) error {
				e.mounts = append(e.mounts, "attach loop "+path)
				return nil
			},
			DetachLoop: func(path string) error {
				e.mounts = append(e.mounts, "detach loop "+path)
				return nil
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	runMounter(t, m)
	// The informer's list and watch done, the client's reactors are no
	// longer read by it (a test may prepend its own) and the recorded
	// requests are the test's own.
	err = wait.PollUntilContextTimeout(testContext(t), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, a := range e.client.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == "csidrivers" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the CSIDriver informer's watch: %v", err)
	}
	e.client.ClearActions()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		drive(e.clock, done)
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return e
}

// runMounter runs m (its informer of CSIDriver objects) until the test
// ends; it returns once the informer has synced.
func runMounter(t *testing.T, m *Mounter) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = m.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if _, err := m.driverPolicy(sctx, testDriver); err != nil {
		t.Fatalf("the CSIDriver informer's sync: %v", err)
	}
}

// isMountPoint is the Mounter's IsMountPoint: only the paths the test
// named, and an error that is fs.ErrNotExist for a missing path, as
// mount-utils'.
func (e *mounterEnv) isMountPoint(path string) (bool, error) {
	if _, err := os.Lstat(path); err != nil {
		return false, err
	}
	return e.mountPoints[path], nil
}

// bindMount and unmount are the Mounter's: they log, and make target a
// mount point or not.
func (e *mounterEnv) bindMount(source, target string) error {
	e.mounts = append(e.mounts, fmt.Sprintf("bind %s %s after %v", source, target, e.drv.Methods()))
	e.mountPoints[target] = true
	return nil
}

func (e *mounterEnv) unmount(target string) error {
	e.mounts = append(e.mounts, fmt.Sprintf("unmount %s before %v", target, e.drv.Methods()))
	delete(e.mountPoints, target)
	return nil
}

// tokenReactor answers a TokenRequest with a token named after its
// audiences, as the API server would with a real one.
func tokenReactor(a k8stesting.Action) (bool, runtime.Object, error) {
	ca, ok := a.(k8stesting.CreateAction)
	if !ok || ca.GetSubresource() != "token" {
		return false, nil, nil
	}
	tr := ca.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
	tr.Status = authenticationv1.TokenRequestStatus{
		Token:               "token-for-" + strings.Join(tr.Spec.Audiences, ","),
		ExpirationTimestamp: metav1.NewTime(testTokenExpiry),
	}
	return true, tr, nil
}

// podsDir and pluginsDir are the Mounter's directories.
func (e *mounterEnv) podsDir() string    { return filepath.Join(e.root, "pods") }
func (e *mounterEnv) pluginsDir() string { return filepath.Join(e.root, "plugins") }

// target is where upstream publishes volume specName of pod uid,
// written out by hand.
func (e *mounterEnv) target(uid, specName string) string {
	return filepath.Join(e.root, "pods", uid, "volumes", "kubernetes.io~csi", specName, "mount")
}

// staging is where upstream stages the volume of handle, written out by
// hand.
func (e *mounterEnv) staging(handle string) string {
	return filepath.Join(e.root, "plugins", "kubernetes.io", "csi", testDriver, fmt.Sprintf("%x", sha256.Sum256([]byte(handle))), "globalmount")
}

func testPod(uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + uid, Namespace: testPodNS, UID: types.UID(uid)},
		Spec: corev1.PodSpec{
			ServiceAccountName: "sa",
			SecurityContext:    &corev1.PodSecurityContext{FSGroup: ptr.To(testFSGroup)},
		},
	}
}

// testPV is a persistent volume with everything set.
func testPV() Volume {
	return Volume{
		SpecName: testPVName, Driver: testDriver, Handle: testHandle, FSType: "ext4",
		MountOptions: []string{"noatime"}, Attributes: map[string]string{"attr": "value"},
		AccessModes:   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StageSecret:   &corev1.SecretReference{Namespace: "kube-system", Name: "stage"},
		PublishSecret: &corev1.SecretReference{Namespace: "kube-system", Name: "publish"},
	}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// attachment is the VolumeAttachment of handle to the test node, as the
// attach/detach controller and the external attacher leave it.
func attachment(handle string, attached bool, metadata map[string]string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: attachmentName(handle, testDriver, testNode)},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: testDriver, NodeName: testNode,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(testPVName)},
		},
		Status: storagev1.VolumeAttachmentStatus{Attached: attached, AttachmentMetadata: metadata},
	}
}

// readVolData reads dir's vol_data.json.
func readVolData(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := loadVolData(dir)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func stageCaps() []csipb.NodeServiceCapability_RPC_Type {
	return []csipb.NodeServiceCapability_RPC_Type{csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}
}
