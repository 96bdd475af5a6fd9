package pullrecords

import (
	"fmt"

	"github.com/distribution/reference"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The names the records are kept by. A pod may spell one image several
// ways ("private/app:v1", "docker.io/private/app:v1",
// "docker.io/private/app:v1" with the default tag left out as
// "private/app"), and the runtime lists it by one of them (containerd's
// normalised name). Upstream keys its intents and credential mappings by
// the pod's spelling, so an intent that outlived a restart (or a record
// that could not be written) protected only that spelling, and a pod in
// another namespace could run the private image under another one as a
// preloaded image (SECURITY.md, issue 26, finding 3). berth keys every
// intent and every credential mapping by the normalised name, computed
// once where an image enters the Manager; records stay keyed by image ID.

// canonical returns image's normalised reference, as containerd resolves
// it: the default registry and library/ path added, ":latest" added when
// it names neither a tag nor a digest ("busybox" is
// "docker.io/library/busybox:latest"). The key of intents.
func canonical(image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("parse image reference %q: %w", image, err)
	}
	return reference.TagNameOnly(named).String(), nil
}

// repository returns image's normalised name without tag or digest
// ("busybox:1.36" is "docker.io/library/busybox"): the key of a record's
// credential mapping.
func repository(image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("parse image reference %q: %w", image, err)
	}
	return named.Name(), nil
}

// canonicalMapping returns rec with its credential mapping keyed by
// normalised names, merging the credentials of keys that name one
// repository (a record upstream wrote under two spellings), and whether
// that changed it. A key that does not parse is kept as it is: it can
// match no image berth looks up. rec is not modified.
func canonicalMapping(rec *kubeletconfigv1beta1.ImagePulledRecord) (*kubeletconfigv1beta1.ImagePulledRecord, bool) {
	out, changed := rec, false
	for key, creds := range rec.CredentialMapping {
		name, err := repository(key)
		if err != nil || name == key {
			continue
		}
		if !changed {
			out, changed = rec.DeepCopy(), true
		}
		delete(out.CredentialMapping, key)
		if _, taken := out.CredentialMapping[name]; !taken {
			out.CredentialMapping[name] = creds
			continue
		}
		out, _ = merge(out, name, creds)
	}
	return out, changed
}
