package pullrecords

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distribution/reference"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Policy says which images present on the node need the credentials of
// the pod that wants them verified (imagePullCredentialsVerificationPolicy
// with preloadedImagesVerificationAllowlist). The zero value verifies
// nothing.
type Policy struct {
	name     kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy
	exact    map[string]bool
	prefixes []string
}

// NewPolicy returns the policy of a configuration, or upstream's error for
// an unknown name or a bad allowlist pattern.
func NewPolicy(name kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy, allowlist []string) (Policy, error) {
	p := Policy{name: name, exact: map[string]bool{}}
	switch name {
	case kubeletconfigv1beta1.NeverVerify, kubeletconfigv1beta1.NeverVerifyPreloadedImages, kubeletconfigv1beta1.AlwaysVerify:
	case kubeletconfigv1beta1.NeverVerifyAllowlistedImages:
		for _, pattern := range allowlist {
			norm, wildcard, err := allowlistPattern(pattern)
			if err != nil {
				return Policy{}, err
			}
			if wildcard {
				p.prefixes = append(p.prefixes, norm)
			} else {
				p.exact[norm] = true
			}
		}
	default:
		return Policy{}, fmt.Errorf("unknown image pull credential verification policy: %v", name)
	}
	return p, nil
}

// RequiresVerification reports whether a pod must prove access to image
// (the container's image field) before using it from the node;
// pulledByKubelet says whether berth (or the kubelet before it) pulled it.
func (p Policy) RequiresVerification(image string, pulledByKubelet bool) bool {
	switch p.name {
	case kubeletconfigv1beta1.NeverVerifyPreloadedImages:
		return pulledByKubelet
	case kubeletconfigv1beta1.NeverVerifyAllowlistedImages:
		return !p.allowlisted(image)
	case kubeletconfigv1beta1.AlwaysVerify:
		return true
	}
	return false
}

func (p Policy) allowlisted(image string) bool {
	name, err := trimTagDigest(image)
	if err != nil {
		name = image // best effort, as upstream
	}
	if p.exact[name] {
		return true
	}
	for _, prefix := range p.prefixes {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// ValidateAllowlist checks preloadedImagesVerificationAllowlist patterns
// as upstream: an image name without tag or digest, or a prefix ending in
// "/*" that names at least a registry.
func ValidateAllowlist(patterns []string) error {
	for _, p := range patterns {
		if _, _, err := allowlistPattern(p); err != nil {
			return err
		}
	}
	return nil
}

// allowlistPattern returns a pattern's image name or, for a wildcard, the
// prefix it matches ("registry/path/"), with upstream's errors.
func allowlistPattern(pattern string) (string, bool, error) {
	if pattern != strings.TrimSpace(pattern) {
		return "", false, fmt.Errorf("leading/trailing spaces are not allowed: %s", pattern)
	}
	trimmed, wildcard := strings.CutSuffix(pattern, "/*")
	if wildcard {
		trimmed += "/"
	}
	if trimmed == "" {
		return "", false, fmt.Errorf("the supplied pattern is too short: %s", pattern)
	}
	if strings.ContainsRune(trimmed, '*') {
		return "", false, fmt.Errorf("not a valid wildcard pattern, only patterns ending with '/*' are allowed: %s", pattern)
	}
	if wildcard {
		if trimmed == "/" {
			return "", false, errors.New("at least registry hostname is required")
		}
		return trimmed, true, nil
	}
	name, err := trimTagDigest(trimmed)
	if err != nil {
		return "", false, fmt.Errorf("failed to parse as an image name: %w", err)
	}
	if name != trimmed {
		return "", false, fmt.Errorf("neither tag nor digest is accepted in an image reference: %s", pattern)
	}
	return trimmed, false, nil
}

// trimTagDigest returns an image reference without its tag and digest,
// not otherwise normalised ("busybox:1.36" is "busybox"): the key of a
// record's credential mapping, as upstream writes it.
func trimTagDigest(image string) (string, error) {
	ref, err := reference.Parse(image)
	if err != nil {
		return "", err
	}
	out := image
	if d, ok := ref.(reference.Digested); ok {
		var found bool
		if out, found = strings.CutSuffix(out, "@"+d.Digest().String()); !found {
			return "", fmt.Errorf("digest was not specified last, this does not appear to be a valid image spec: %q", image)
		}
	}
	if t, ok := ref.(reference.Tagged); ok {
		var found bool
		if out, found = strings.CutSuffix(out, ":"+t.Tag()); !found {
			return "", fmt.Errorf("tag %q was not specified last (or before the digest), this does not appear to be a valid image spec: %q", t.Tag(), image)
		}
	}
	return out, nil
}
