package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

const (
	kubeletConfigKind = "KubeletConfiguration"
	dropInExtension   = ".conf"
)

// readConfigFile reads a KubeletConfiguration file (YAML or JSON), checks
// its apiVersion and kind, decodes it strictly (unknown and duplicate fields
// are errors), and returns the fields it sets as a JSON object without
// apiVersion and kind. Relative paths in it are resolved against the file's
// directory, as upstream does.
func readConfigFile(env Env, name string) (map[string]any, error) {
	data, err := env.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read config file %q: %w", name, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("read config file %q: file is empty", name)
	}
	if err := decodeStrict(data); err != nil {
		return nil, fmt.Errorf("decode config file %q: %w", name, err)
	}
	raw, err := toJSONObject(data)
	if err != nil {
		return nil, fmt.Errorf("decode config file %q: %w", name, err)
	}
	delete(raw, "apiVersion")
	delete(raw, "kind")
	resolveRelativePaths(raw, filepath.Dir(name))
	return raw, nil
}

// decodeStrict checks that data is a kubelet.config.k8s.io/v1beta1
// KubeletConfiguration with no unknown or duplicate fields.
func decodeStrict(data []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return fmt.Errorf("parse: %s", oneLine(err.Error()))
	}
	want := kubeletconfigv1beta1.SchemeGroupVersion.String()
	switch {
	case tm.APIVersion == "":
		return fmt.Errorf("apiVersion is missing (want %q)", want)
	case tm.APIVersion != want:
		return fmt.Errorf("apiVersion %q is not supported (want %q)", tm.APIVersion, want)
	case tm.Kind == "":
		return fmt.Errorf("kind is missing (want %q)", kubeletConfigKind)
	case tm.Kind != kubeletConfigKind:
		return fmt.Errorf("kind %q is not supported (want %q)", tm.Kind, kubeletConfigKind)
	}
	scheme := runtime.NewScheme()
	if err := kubeletconfigv1beta1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	if _, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil); err != nil {
		return fmt.Errorf("%s", oneLine(err.Error()))
	}
	return nil
}

// oneLine folds a multi-line decoder message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// toJSONObject converts YAML or JSON to a JSON object, keeping numbers exact.
func toJSONObject(data []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("convert to JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("convert to JSON: %w", err)
	}
	return obj, nil
}

// pathFields are the KubeletConfiguration fields that hold file paths, which
// upstream resolves relative to the configuration file.
func pathFields() [][]string {
	return [][]string{
		{"staticPodPath"},
		{"authentication", "x509", "clientCAFile"},
		{"tlsCertFile"},
		{"tlsPrivateKeyFile"},
		{"resolvConf"},
		{"volumePluginDir"},
		{"podLogsDir"},
	}
}

func resolveRelativePaths(obj map[string]any, dir string) {
	for _, p := range pathFields() {
		m := obj
		for _, k := range p[:len(p)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				m = nil
				break
			}
			m = next
		}
		if m == nil {
			continue
		}
		last := p[len(p)-1]
		if s, ok := m[last].(string); ok && s != "" && !filepath.IsAbs(s) {
			m[last] = filepath.Join(dir, s)
		}
	}
}

// dropInFiles lists the *.conf files under dir in the order upstream's
// filepath.WalkDir visits them: lexical by name, descending into
// subdirectories where they sort.
func dropInFiles(env Env, dir string) ([]string, error) {
	entries, err := env.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read config dir %q: %w", dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var files []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			sub, err := dropInFiles(env, p)
			if err != nil {
				return nil, err
			}
			files = append(files, sub...)
		case path.Ext(e.Name()) == dropInExtension:
			files = append(files, p)
		}
	}
	return files, nil
}

// mergePatch applies an RFC 7386 JSON merge patch, which is how upstream
// merges --config-dir drop-ins: objects merge key by key, a null deletes a
// key, and any other value (lists included) replaces the target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	if ok {
		for k, v := range t {
			out[k] = v
		}
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// toObject and fromObject convert between the typed configuration and the
// JSON object form the merge works on.
func toObject(kc *kubeletconfigv1beta1.KubeletConfiguration) (map[string]any, error) {
	j, err := json.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	return toJSONObject(j)
}

func fromObject(obj map[string]any) (*kubeletconfigv1beta1.KubeletConfiguration, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	kc := &kubeletconfigv1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(j, kc); err != nil {
		return nil, fmt.Errorf("decode merged configuration: %w", err)
	}
	return kc, nil
}
