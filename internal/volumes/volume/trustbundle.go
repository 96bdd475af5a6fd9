package volume

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxLabelSelectorLength bounds a clusterTrustBundle projection's label
// selector, as upstream's (100 KiB).
const maxLabelSelectorLength = 100 * 1024

// Upstream's messages (the kubelet's clustertrustbundle manager and the
// projected volume plugin); upstream_test.go pins them.
const (
	msgCTBStatic      = "ClusterTrustBundle projection is not supported in static kubelet mode"
	msgCTBGet         = "while getting ClusterTrustBundle: %w"
	msgCTBSelector    = "while parsing label selector: %w"
	msgCTBSelectorLen = "label selector length (%d) is larger than %d"
	msgCTBList        = "while listing ClusterTrustBundles matching label selector %v: %w"
	msgCTBNoMatch     = "combination of signerName and labelSelector matched zero ClusterTrustBundles"
	msgCTBNeither     = "ClusterTrustBundle projection requires either name or signerName to be set"
)

// trustAnchors reads the trust anchors a clusterTrustBundle projection
// shows from the API, with upstream's rules and messages: the bundle of a
// name, or every bundle of the signer whose labels the selector matches (a
// selector left out matches none); a missing bundle, or no match, is an
// error unless the projection is optional (then the file is empty).
func (m *Manager) trustAnchors(ctx context.Context, pod *corev1.Pod, st *podState, src *corev1.ClusterTrustBundleProjection) ([]byte, error) {
	if m.cfg.Client == nil {
		return nil, errors.New(msgCTBStatic)
	}
	optional := isTrue(src.Optional)
	bundles := m.cfg.Client.CertificatesV1().ClusterTrustBundles()
	switch {
	case src.Name != nil:
		var ctb *certificatesv1.ClusterTrustBundle
		err := m.retry(ctx, pod, st, "ClusterTrustBundle "+*src.Name, func(ctx context.Context) error {
			var err error
			ctb, err = bundles.Get(ctx, *src.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && optional {
				return nil
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf(msgCTBGet, err)
		}
		if ctb == nil {
			return []byte{}, nil
		}
		return normalizeTrustAnchors([]certificatesv1.ClusterTrustBundle{*ctb}), nil
	case src.SignerName != nil:
		matched, err := m.bundlesOf(ctx, pod, st, *src.SignerName, src.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(matched) == 0 {
			if optional {
				return []byte{}, nil
			}
			return nil, errors.New(msgCTBNoMatch)
		}
		return normalizeTrustAnchors(matched), nil
	}
	return nil, errors.New(msgCTBNeither)
}

// bundlesOf lists the bundles of signer whose labels ls matches (nil
// matches none, empty every one).
func (m *Manager) bundlesOf(ctx context.Context, pod *corev1.Pod, st *podState, signer string, ls *metav1.LabelSelector) ([]certificatesv1.ClusterTrustBundle, error) {
	if ls == nil {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf(msgCTBSelector, err)
	}
	if n := len(selector.String()); n > maxLabelSelectorLength {
		return nil, fmt.Errorf(msgCTBSelectorLen, n, maxLabelSelectorLength)
	}
	var list *certificatesv1.ClusterTrustBundleList
	err = m.retry(ctx, pod, st, "ClusterTrustBundles of "+signer, func(ctx context.Context) error {
		var err error
		list, err = m.cfg.Client.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf(msgCTBList, ls, err)
	}
	var out []certificatesv1.ClusterTrustBundle
	for _, ctb := range list.Items {
		if ctb.Spec.SignerName == signer && selector.Matches(labels.Set(ctb.Labels)) {
			out = append(out, ctb)
		}
	}
	return out, nil
}

// normalizeTrustAnchors is the PEM file of the bundles' certificates, each
// once, in a stable order (upstream deduplicates too; it shuffles the
// order at every start so that nobody depends on it, berth sorts by the
// certificate's bytes).
func normalizeTrustAnchors(bundles []certificatesv1.ClusterTrustBundle) []byte {
	var ders [][]byte
	for _, ctb := range bundles {
		rest := []byte(ctb.Spec.TrustBundle)
		for {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			ders = append(ders, b.Bytes)
		}
	}
	slices.SortFunc(ders, bytes.Compare)
	ders = slices.CompactFunc(ders, bytes.Equal)
	out := []byte{}
	for _, der := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}
