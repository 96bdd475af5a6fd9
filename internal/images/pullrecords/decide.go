package pullrecords

import (
	"slices"
	"strings"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Check results, the result label of
// kubelet_imagemanager_image_mustpull_checks_total (upstream's
// mustAttemptImagePullResult values).
const (
	ResultPolicyAllowed = "credentialPolicyAllowed"
	ResultRecordFound   = "credentialRecordFound"
	ResultMustAuth      = "mustAuthenticate"
	ResultError         = "error"
)

// writeWhileMatchingLimit stops a record that already lists this many
// secrets for an image from growing while pods are only being matched
// against it (upstream's writeRecordWhileMatchingLimit), so namespace
// turnover cannot make it grow without bound.
const writeWhileMatchingLimit = 100

// Secret is a pull secret's coordinates and the hash of the credentials
// it gave for the image (upstream's ImagePullSecret).
type Secret = kubeletconfigv1beta1.ImagePullSecret

// verdict is what decide found for one image and pod.
type verdict struct {
	mustPull bool
	result   string
	// learn, when not nil, is a secret of the pod that matched a recorded
	// one by hash or by coordinates but not both; the caller records it so
	// that the next check matches at once.
	learn *Secret
}

// decide says whether a pod must pull image although imageRef is present:
// the policy first, then the record's credentials for the image's
// normalised name (without tag or digest) against the pod's secrets, as upstream's
// MustAttemptImagePull. podSecrets is called only when the record holds
// secrets to compare with.
func decide(p Policy, image string, rec *kubeletconfigv1beta1.ImagePulledRecord, pulledByKubelet bool, podSecrets func() ([]Secret, error)) (verdict, error) {
	if !p.RequiresVerification(image, pulledByKubelet) {
		return verdict{result: ResultPolicyAllowed}, nil
	}
	if rec == nil {
		return verdict{mustPull: true, result: ResultMustAuth}, nil
	}
	name, err := repository(image)
	if err != nil {
		return verdict{mustPull: true, result: ResultError}, nil
	}
	creds, ok := rec.CredentialMapping[name]
	switch {
	case !ok:
		return verdict{mustPull: true, result: ResultMustAuth}, nil
	case creds.NodePodsAccessible:
		return verdict{result: ResultRecordFound}, nil
	case len(creds.KubernetesSecrets) == 0:
		// Service account records are upstream's token mode, which berth
		// refuses: never a match here.
		return verdict{mustPull: true, result: ResultMustAuth}, nil
	}
	secrets, err := podSecrets()
	if err != nil {
		return verdict{mustPull: true, result: ResultError}, err
	}
	roomToLearn := len(creds.KubernetesSecrets) < writeWhileMatchingLimit
	if s, learn, found := matchSecret(secrets, creds.KubernetesSecrets, roomToLearn); found {
		v := verdict{result: ResultRecordFound}
		if learn && roomToLearn {
			v.learn = &s
		}
		return v, nil
	}
	return verdict{mustPull: true, result: ResultMustAuth}, nil
}

// matchSecret finds the first of the pod's secrets that a recorded one
// matches, by credential hash (a non-empty one) or by coordinates (the
// same secret object, whose content may have changed); learn says whether
// the match was on one of the two only. As upstream, a match by
// coordinates alone counts only while the record has room to learn the
// new hash.
func matchSecret(pod, recorded []Secret, roomToLearn bool) (Secret, bool, bool) {
	for _, ps := range pod {
		for _, rs := range recorded {
			hashes := rs.CredentialHash != "" && ps.CredentialHash == rs.CredentialHash
			coords := ps.UID == rs.UID && ps.Namespace == rs.Namespace && ps.Name == rs.Name
			if hashes || (coords && roomToLearn) {
				return ps, !(hashes && coords), true
			}
		}
	}
	return Secret{}, false, false
}

// merge returns rec with creds added for the image name, and whether that
// changed it (upstream's pulledRecordMergeNewCreds): node-wide access
// replaces any secrets and is never narrowed again; secrets merge by
// coordinates, the newer hash winning, sorted by namespace, name and UID.
// rec is not modified.
func merge(rec *kubeletconfigv1beta1.ImagePulledRecord, name string, creds kubeletconfigv1beta1.ImagePullCredentials) (*kubeletconfigv1beta1.ImagePulledRecord, bool) {
	if !creds.NodePodsAccessible && len(creds.KubernetesSecrets) == 0 {
		return rec, false
	}
	old, found := rec.CredentialMapping[name]
	switch {
	case !found:
	case old.NodePodsAccessible:
		return rec, false
	case creds.NodePodsAccessible:
		creds = kubeletconfigv1beta1.ImagePullCredentials{NodePodsAccessible: true}
	default:
		secrets, changed := mergeSecrets(old.KubernetesSecrets, creds.KubernetesSecrets)
		if !changed {
			return rec, false
		}
		creds = kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: secrets, KubernetesServiceAccounts: old.KubernetesServiceAccounts}
	}
	out := rec.DeepCopy()
	if out.CredentialMapping == nil {
		out.CredentialMapping = map[string]kubeletconfigv1beta1.ImagePullCredentials{}
	}
	out.CredentialMapping[name] = creds
	return out, true
}

// mergeSecrets adds the new secrets to the old ones, unique by
// coordinates with the new hash winning, sorted; and whether anything
// changed.
func mergeSecrets(old, add []Secret) ([]Secret, bool) {
	out := slices.Clone(old)
	changed := false
	for _, s := range add {
		i := slices.IndexFunc(out, func(o Secret) bool { return o.UID == s.UID && o.Namespace == s.Namespace && o.Name == s.Name })
		switch {
		case i < 0:
			out = append(out, s)
			changed = true
		case out[i].CredentialHash != s.CredentialHash:
			out[i].CredentialHash = s.CredentialHash
			changed = true
		}
	}
	if !changed {
		return old, false
	}
	slices.SortFunc(out, func(a, b Secret) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.UID, b.UID)
	})
	return out, true
}
