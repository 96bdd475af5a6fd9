package simbench

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The harness's pods: bare pods bound to their node by spec.nodeName (no
// scheduler), one container of a small image no simulator pulls for real,
// no service account token (nothing for a node to mount or request).
const (
	podNamespace = "simbench"
	podLabel     = "simbench.berth.dev/pod"
	podImage     = "registry.k8s.io/pause:3.10"
	// createWorkers is how many pods the harness creates at once.
	createWorkers = 16
)

// benchPod is pod j of node.
func benchPod(node string, j int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", node, j), Namespace: podNamespace,
			Labels: map[string]string{podLabel: "true"}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: podImage, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

// prepareNamespace creates the pods' namespace and waits for its default
// service account, without which the API server refuses pods.
func prepareNamespace(ctx context.Context, client kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: podNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", podNamespace, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(podNamespace).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// createPods creates perNode pods on each of sim's nodes, createWorkers
// at a time.
func createPods(ctx context.Context, client kubernetes.Interface, sim string, nodes, perNode int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(createWorkers)
	for j := range perNode {
		for i := range nodes {
			g.Go(func() error {
				_, err := client.CoreV1().Pods(podNamespace).Create(ctx, benchPod(nodeName(sim, i), j), metav1.CreateOptions{})
				return err
			})
		}
	}
	return g.Wait()
}
