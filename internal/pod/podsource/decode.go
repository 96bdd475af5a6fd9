package podsource

import (
	"bytes"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// manifestDecoder turns manifest bytes (YAML or JSON) into v1 Pods. It is
// safe for concurrent use: it holds only an immutable scheme and serializer.
type manifestDecoder struct {
	serializer *serializerjson.Serializer
}

func newManifestDecoder() (*manifestDecoder, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register core/v1 types: %w", err)
	}
	s := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, scheme, scheme,
		serializerjson.SerializerOptions{Yaml: true, Strict: true})
	return &manifestDecoder{serializer: s}, nil
}

// decode parses data as a v1 Pod or, when allowList is set, a v1 PodList.
// Unknown and duplicate fields do not fail the decode (the upstream kubelet
// ignores them) but come back as warnings, so the caller can log them.
func (d *manifestDecoder) decode(data []byte, allowList bool) (pods []*corev1.Pod, warnings []string, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, errors.New("empty manifest")
	}
	obj, gvk, err := d.serializer.Decode(data, nil, nil)
	if err != nil {
		strict, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, nil, fmt.Errorf("decode manifest: %w", err)
		}
		for _, e := range strict.Errors() {
			warnings = append(warnings, e.Error())
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return []*corev1.Pod{o}, warnings, nil
	case *corev1.PodList:
		if !allowList {
			return nil, warnings, errors.New("decode manifest: a PodList is not allowed here, expected one Pod")
		}
		pods = make([]*corev1.Pod, 0, len(o.Items))
		for i := range o.Items {
			pods = append(pods, &o.Items[i])
		}
		return pods, warnings, nil
	}
	want := "Pod"
	if allowList {
		want = "Pod or PodList"
	}
	return nil, warnings, fmt.Errorf("decode manifest: got %s, expected a v1 %s", gvk.String(), want)
}
