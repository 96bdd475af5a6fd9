package kuberuntime

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Reference grammar (distribution/reference), the parts berth checks.
var (
	pathComponentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	domainRE        = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?\.?)+(?::[0-9]+)?$|^\[[0-9a-fA-F:.]+\](?::[0-9]+)?$`)
	tagRE           = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	digestRE        = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$`)
)

var errInvalidReference = errors.New("invalid reference format")

// withDefaultTag validates an image reference and appends ":latest" when it
// names neither a tag nor a digest (upstream applyDefaultImageTag). The name
// is not otherwise normalised: the runtime resolves short names.
func withDefaultTag(image string) (string, error) {
	if err := validateReference(image); err != nil {
		return "", fmt.Errorf("couldn't parse image reference %q: %w", image, err)
	}
	name, _, digested := strings.Cut(image, "@")
	_, tagged := splitTag(name)
	if !tagged && !digested {
		return image + ":latest", nil
	}
	return image, nil
}

// splitTag splits "name:tag", the colon being after the last slash (a
// colon before it is a registry port).
func splitTag(name string) (tag string, ok bool) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return "", false
	}
	return name[i+1:], true
}

// isRegistryHost reports whether the first path component of an image
// name is its registry host, by the rule containerd and Docker share
// (splitDockerDomain): it has a '.' or a ':', is "localhost", or has an
// upper-case letter (which a repository path cannot). The reference check
// and the credential lookup both ask it, so that "Registry/app:1" is
// never taken for a Docker Hub repository.
func isRegistryHost(component string) bool {
	return strings.ContainsAny(component, ".:") || component == "localhost" || component != strings.ToLower(component)
}

func validateReference(image string) error {
	name, digest, digested := strings.Cut(image, "@")
	if digested && !digestRE.MatchString(digest) {
		return errInvalidReference
	}
	if tag, ok := splitTag(name); ok {
		if !tagRE.MatchString(tag) {
			return errInvalidReference
		}
		name = name[:len(name)-len(tag)-1]
	}
	if name == "" || len(name) > 255 {
		return errInvalidReference
	}
	parts := strings.Split(name, "/")
	if len(parts) > 1 && isRegistryHost(parts[0]) {
		if !domainRE.MatchString(parts[0]) {
			return errInvalidReference
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !pathComponentRE.MatchString(p) {
			if strings.ToLower(p) != p && pathComponentRE.MatchString(strings.ToLower(p)) {
				return errors.New("repository name must be lowercase")
			}
			return errInvalidReference
		}
	}
	return nil
}
