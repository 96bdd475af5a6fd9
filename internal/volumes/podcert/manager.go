package podcert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// EventRecorder records warnings about a pod (the denied or failed
// request, the late refresh, the expired certificate).
type EventRecorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config configures a Manager.
type Config struct {
	// Client makes and reads the PodCertificateRequests and reads the
	// pods' service accounts (required).
	Client kubernetes.Interface
	// NodeName is the node's name, NodeUID returns its Node's UID ("" until
	// the Node is registered); both go into every request (required).
	NodeName string
	NodeUID  func() types.UID
	// Clock says when a certificate is due for refresh (required).
	Clock clock.PassiveClock
	// Recorder gets the warnings; nil records none.
	Recorder EventRecorder
	// Jitter is added to beginRefreshAt and to abandonAfter; nil means
	// upstream's, uniform in [0, 5 minutes).
	Jitter func() time.Duration
}

// Manager keeps the credentials of the podCertificate projections of the
// node's pods: for each, a private key generated on the node, a
// PodCertificateRequest for it, the certificate the signer issued, and a
// new key and request once the certificate is due for refresh.
//
// It starts nothing: the volume manager asks it for a projection's
// credential (Bundle) when it sets up the volume and in each of its
// refresh rounds, and each call moves the projection on (observe the
// request, make the next). State is not kept across restarts of berth, as
// upstream's: a restarted node requests new certificates.
//
// Concurrency: safe for concurrent use. mu guards only the map of pods;
// each pod's records have their own lock, held across that pod's API
// calls, so pods do not wait on each other.
type Manager struct {
	cfg Config

	mu   sync.Mutex // guards pods
	pods map[types.UID]*podRecords
}

// podRecords are the records of one pod's projections.
type podRecords struct {
	mu    sync.Mutex // serialises the pod's Bundle calls and Forget; guards the fields below
	gone  bool       // Forget ran: nothing is kept any more
	byKey map[sourceKey]*record
}

// sourceKey names a projection: the volume and the source's index in it.
type sourceKey struct {
	volume string
	index  int
}

// New validates cfg and returns a Manager.
func New(cfg Config) (*Manager, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("pod certificate manager needs Client")
	case cfg.NodeName == "" || cfg.NodeUID == nil:
		return nil, errors.New("pod certificate manager needs NodeName and NodeUID")
	case cfg.Clock == nil:
		return nil, errors.New("pod certificate manager needs Clock")
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func() time.Duration { return rand.N(maxJitter) }
	}
	return &Manager{cfg: cfg, pods: map[types.UID]*podRecords{}}, nil
}

// Bundle returns the private key (PEM) and the certificate chain of the
// podCertificate source at index of the pod's projected volume, moving the
// projection on first: the request made, observed, refreshed. Before the
// first certificate is issued it fails with ErrNotIssued, after a denial or
// failure with the signer's reason; once one is issued it returns the
// newest, also while a refresh fails (the failure is logged).
func (m *Manager) Bundle(ctx context.Context, pod *corev1.Pod, volume string, index int) (key, chain []byte, err error) {
	src, err := projection(pod, volume, index)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(src); err != nil {
		return nil, nil, err
	}
	pr := m.records(pod.UID)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.gone {
		return nil, nil, fmt.Errorf("pod %q is gone", pod.UID)
	}
	k := sourceKey{volume, index}
	r := record{}
	if old := pr.byKey[k]; old != nil {
		r = *old
	}
	r, err = m.advance(ctx, pod, src, r)
	pr.byKey[k] = &r
	key, chain, current := r.bundle()
	if err != nil && current == nil {
		klog.FromContext(ctx).Error(err, "Pod certificate refresh failed, keeping the current certificate",
			"pod", klog.KObj(pod), "volume", volume, "source", index)
		err = nil
	}
	if err == nil {
		err = current
	}
	if err != nil {
		return nil, nil, err
	}
	// Copies: Forget overwrites the record's key.
	return bytes.Clone(key), bytes.Clone(chain), nil
}

// advance observes the request the record waits for and makes the one it
// needs now; the caller holds the pod's lock.
func (m *Manager) advance(ctx context.Context, pod *corev1.Pod, src *corev1.PodCertificateProjection, r record) (record, error) {
	now := m.cfg.Clock.Now()
	var ws []warning
	if r.phase == phaseWait || r.phase == phaseWaitRefresh {
		pcr, err := m.find(ctx, pod.Namespace, r.pending)
		if err != nil {
			return r, fmt.Errorf(msgGetPCR, pod.Namespace+"/"+r.pending, err)
		}
		r, ws, err = r.observe(pcr, pod.Namespace, now, m.cfg.Jitter())
		m.warn(pod, ws)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Making a new PodCertificateRequest", "pod", klog.KObj(pod), "reason", err)
		}
	}
	if !r.needsRequest(now) {
		return r, nil
	}
	if r.phase == phaseFresh {
		r, ws = r.lateness(now)
		m.warn(pod, ws)
	}
	return m.request(ctx, pod, src, r)
}

// request makes the PodCertificateRequest of a new key for the record.
func (m *Manager) request(ctx context.Context, pod *corev1.Pod, src *corev1.PodCertificateProjection, r record) (record, error) {
	what := msgCreateInitial
	if r.phase == phaseFresh {
		what = msgCreateRefresh
	}
	sa, err := m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, pod.Spec.ServiceAccountName, metav1.GetOptions{})
	if err != nil {
		return r, fmt.Errorf(msgGetSA, err)
	}
	nodeUID := m.cfg.NodeUID()
	if nodeUID == "" {
		return r, fmt.Errorf(msgGetNode, fmt.Errorf("node %q is not registered yet", m.cfg.NodeName))
	}
	key, csr, err := newKey(src.KeyType)
	if err != nil {
		return r, fmt.Errorf(what, err)
	}
	req := newRequest(pod, src, sa.UID, m.cfg.NodeName, nodeUID, csr)
	made, err := m.cfg.Client.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return r, fmt.Errorf(what, fmt.Errorf(msgCreateOnAPI, err))
	}
	created := made.CreationTimestamp.Time
	if created.IsZero() {
		created = m.cfg.Clock.Now()
	}
	klog.FromContext(ctx).V(4).Info("PodCertificateRequest created", "pod", klog.KObj(pod), "request", made.Name, "signer", src.SignerName)
	return r.made(key, made.Name, created, m.cfg.Jitter()), nil
}

// newRequest is the PodCertificateRequest of a pod's projection, as
// upstream's kubelet fills it: owned by the pod, naming the pod, its
// service account and the node with their UIDs, the stub CSR as the proof
// of possession of the key.
func newRequest(pod *corev1.Pod, src *corev1.PodCertificateProjection, saUID types.UID, nodeName string, nodeUID types.UID, csr []byte) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       pod.Namespace,
			GenerateName:    pcrGenerateName,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}},
		},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName:                src.SignerName,
			PodName:                   pod.Name,
			PodUID:                    pod.UID,
			ServiceAccountName:        pod.Spec.ServiceAccountName,
			ServiceAccountUID:         saUID,
			NodeName:                  types.NodeName(nodeName),
			NodeUID:                   nodeUID,
			MaxExpirationSeconds:      src.MaxExpirationSeconds,
			StubPKCS10Request:         csr,
			UnverifiedUserAnnotations: src.UserAnnotations,
		},
	}
}

// find returns the pod's request of that name, nil when the API does not
// show it. It lists with the node's field selector, which the node
// authorizer allows at once (a get waits for its graph to learn of the
// request).
func (m *Manager) find(ctx context.Context, namespace, name string) (*certificatesv1.PodCertificateRequest, error) {
	sel := fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", m.cfg.NodeName), fields.OneTermEqualSelector("metadata.name", name))
	list, err := m.cfg.Client.CertificatesV1().PodCertificateRequests(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Name == name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

func (m *Manager) warn(pod *corev1.Pod, ws []warning) {
	if m.cfg.Recorder == nil {
		return
	}
	for _, w := range ws {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, w.reason, "%s", w.message)
	}
}

// records returns the pod's records, made on first use.
func (m *Manager) records(uid types.UID) *podRecords {
	m.mu.Lock()
	defer m.mu.Unlock()
	pr := m.pods[uid]
	if pr == nil {
		pr = &podRecords{byKey: map[sourceKey]*record{}}
		m.pods[uid] = pr
	}
	return pr
}

// Forget drops the keys, certificates and requests of a pod that is gone
// (podgone.Owner); the key bytes are overwritten. It waits for a Bundle
// call of the pod in flight.
func (m *Manager) Forget(_ context.Context, uid types.UID) {
	m.mu.Lock()
	pr := m.pods[uid]
	delete(m.pods, uid)
	m.mu.Unlock()
	if pr == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.gone = true
	for _, r := range pr.byKey {
		clear(r.key)
		clear(r.pendingKey)
	}
	pr.byKey = nil
}

// Pods returns how many pods the Manager keeps credentials for (tests,
// metrics).
func (m *Manager) Pods() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pods)
}
