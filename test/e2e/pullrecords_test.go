package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// testPullRecords: an image pulled from an authenticated registry with a
// pull secret stays on the node, yet a pod of another namespace that names
// it with IfNotPresent and has no secret must pull it itself and is
// refused (ErrImagePull with the registry's 401), and one with Never is
// told it is not present; a pod of the owner's namespace with the same
// secret uses it without a pull (KubeletEnsureSecretPulledImages, on by
// default). The records are upstream's files under the root directory.
func (e *clusterEnv) testPullRecords(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	root, err := cluster.ResolveBinDir("")
	must(t, err)
	image := reg.host + "/records/busybox:1.0"
	must(t, reg.push(filepath.Join(root, "..", "..", "images", "busybox", "image.tar"), "records/busybox", "1.0"))
	auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + registryPassword))
	_, err = e.admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "records-cred", Namespace: "default"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + reg.host + `":{"auth":"` + auth + `"}}}`)},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = e.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "records-other"}}, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "records-other's default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("records-other").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	pods := []*corev1.Pod{
		recordsPod("default", "records-owner", image, corev1.PullAlways, "records-cred"),
		recordsPod("records-other", "records-thief", image, corev1.PullIfNotPresent, ""),
		recordsPod("records-other", "records-never", image, corev1.PullNever, ""),
		recordsPod("default", "records-friend", image, corev1.PullNever, "records-cred"),
	}
	t.Cleanup(func() {
		for _, p := range pods {
			_ = e.admin.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
		e.waitAPI(t, "records pods gone", func(ctx context.Context) (bool, error) {
			for _, p := range pods {
				if _, err := e.admin.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, nil
				}
			}
			return true, nil
		})
		_ = e.admin.CoreV1().Namespaces().Delete(ctx, "records-other", metav1.DeleteOptions{})
		removeImageNames(t, reg.host+"/records/")
	})

	create := func(p *corev1.Pod) {
		_, err := e.admin.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
	}
	create(pods[0])
	e.waitPodRunning(t, "records-owner")
	create(pods[1])
	create(pods[2])
	e.waitWaiting(t, pods[1], "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", image))
	e.waitWaiting(t, pods[2], "ErrImageNeverPull", fmt.Sprintf("Container image %q is not present with pull policy of Never", image))
	create(pods[3])
	e.waitPodRunning(t, "records-friend")
	e.waitAPI(t, "records-friend's Pulled event for a verified image", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=records-friend,reason=Pulled"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Message == fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image) {
				return true, nil
			}
		}
		return false, nil
	})
	records, err := filepath.Glob(filepath.Join(e.node.rootDir, "image_manager", "pulled", "sha256-*"))
	must(t, err)
	if len(records) == 0 {
		t.Errorf("no image pulled record under %s/image_manager/pulled", e.node.rootDir)
	}
}

// waitWaiting waits for the pod's container to wait with reason and a
// message starting with prefix.
func (e *clusterEnv) waitWaiting(t *testing.T, p *corev1.Pod, reason, prefix string) {
	t.Helper()
	var got *corev1.ContainerStateWaiting
	e.waitAPI(t, p.Name+" waiting in "+reason, func(ctx context.Context) (bool, error) {
		cur, err := e.admin.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || len(cur.Status.ContainerStatuses) == 0 {
			return false, err
		}
		got = cur.Status.ContainerStatuses[0].State.Waiting
		return got != nil && got.Reason == reason && strings.HasPrefix(got.Message, prefix), nil
	})
	if got == nil || got.Reason != reason {
		t.Errorf("%s: waiting %+v, want reason %s", p.Name, got, reason)
	}
}

func recordsPod(ns, name, image string, policy corev1.PullPolicy, secret string) *corev1.Pod {
	p := privatePod(name, image)
	p.Namespace = ns
	p.Spec.Containers[0].ImagePullPolicy = policy
	if secret != "" {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: secret}}
	}
	return p
}
