package mirrorpod

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ErrNodeNotRegistered is returned by Create while the Node has no UID yet:
// the NodeRestriction admission plugin refuses a mirror pod without an
// owner reference carrying the Node's UID. Retry after registration.
var ErrNodeNotRegistered = errors.New("node is not registered yet")

// Client creates and deletes mirror pods.
//
// Concurrency: safe for concurrent use; it holds no mutable state.
type Client struct {
	client   kubernetes.Interface
	nodeName string
	nodeUID  func() types.UID
}

// New returns a Client for the node nodeName. nodeUID returns the UID of
// the node's Node object, or "" while the node is not registered (or is
// being deleted: upstream creates no mirror pods then either).
func New(client kubernetes.Interface, nodeName string, nodeUID func() types.UID) *Client {
	return &Client{client: client, nodeName: nodeName, nodeUID: nodeUID}
}

// Create creates the mirror pod of static. A pod of that name that already
// exists is not an error: the next Plan sees it and decides.
func (c *Client) Create(ctx context.Context, static *corev1.Pod) error {
	uid := c.nodeUID()
	if uid == "" {
		return fmt.Errorf("create mirror pod %q: %w", klog.KObj(static), ErrNodeNotRegistered)
	}
	mirror := build(static, c.nodeName, uid)
	klog.FromContext(ctx).V(2).Info("Creating a mirror pod", "pod", klog.KObj(static), "hash", mirror.Annotations[podutil.ConfigMirrorAnnotation])
	_, err := c.client.CoreV1().Pods(mirror.Namespace).Create(ctx, mirror, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create mirror pod %q: %w", klog.KObj(static), err)
	}
	return nil
}

// Delete deletes the mirror pod name/namespace at once (grace period 0).
// With a uid, only that very object is deleted: a pod of the same name
// created since is left alone. A pod already gone, or replaced, is not an
// error.
func (c *Client) Delete(ctx context.Context, name, namespace string, uid types.UID) error {
	opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if uid != "" {
		opts.Preconditions = metav1.NewUIDPreconditions(string(uid))
	}
	klog.FromContext(ctx).V(2).Info("Deleting a mirror pod", "pod", klog.KRef(namespace, name), "podUID", uid)
	err := c.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	// A failed UID precondition comes back as a Conflict.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete mirror pod %q: %w", klog.KRef(namespace, name), err)
	}
	return nil
}

// Apply performs a, an Action that Plan returned for static and mirror:
// Create creates the mirror of static, Delete deletes mirror, Recreate
// deletes mirror (UID precondition) and then creates the mirror of static,
// as upstream's SyncPod does in one sync.
func (c *Client) Apply(ctx context.Context, a Action, static, mirror *corev1.Pod) error {
	switch a {
	case Create:
		return c.Create(ctx, static)
	case Delete:
		return c.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID)
	case Recreate:
		if err := c.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID); err != nil {
			return err
		}
		return c.Create(ctx, static)
	}
	return nil
}

// build returns the mirror pod of static: a copy of its metadata (name,
// namespace, labels, annotations) and spec, with the config.mirror
// annotation and a controller owner reference to the Node. The
// NodeRestriction admission plugin requires exactly this owner reference
// (apiVersion v1, kind Node, the node's name and UID, controller true, no
// blockOwnerDeletion) and spec.nodeName set to the node; it also refuses
// pods that reference service accounts, secrets, config maps, persistent
// volume claims or cluster trust bundles, which static pods must not.
func build(static *corev1.Pod, nodeName string, nodeUID types.UID) *corev1.Pod {
	src := static.DeepCopy()
	annotations := make(map[string]string, len(src.Annotations)+1)
	for k, v := range src.Annotations {
		annotations[k] = v
	}
	annotations[podutil.ConfigMirrorAnnotation] = configHash(static)
	mirror := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        src.Name,
			Namespace:   src.Namespace,
			Labels:      src.Labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1",
				Kind:       "Node",
				Name:       nodeName,
				UID:        nodeUID,
				Controller: ptrTo(true),
			}},
		},
		Spec: src.Spec,
	}
	if mirror.Spec.NodeName == "" {
		mirror.Spec.NodeName = nodeName
	}
	return mirror
}

func ptrTo[T any](v T) *T { return &v }
