package config

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// fuzzFlags loads /etc/berth/config.yaml, and the drop-in directory
// /etc/berth/conf.d when withDropIn is set, with the default flags.
func fuzzFlags(withDropIn bool) *Flags {
	f := NewFlags()
	f.ConfigFile = "/etc/berth/config.yaml"
	if withDropIn {
		f.ConfigDir = "/etc/berth/conf.d"
	}
	return f
}

// FuzzLoad: Load never panics on any configuration file and drop-in; a
// configuration it accepts is a fixed point of the defaults, and encoding
// it as a KubeletConfiguration file and loading that again gives the same
// Config.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, file, dropIn []byte) {
		fsys := fstest.MapFS{"etc/berth/config.yaml": {Data: file}}
		if len(dropIn) > 0 {
			fsys["etc/berth/conf.d/10.conf"] = &fstest.MapFile{Data: dropIn}
		}
		flags := fuzzFlags(len(dropIn) > 0)
		cfg, err := Load(context.Background(), flags, mapFSEnv(fsys))
		if err != nil {
			return
		}
		defaulted := cfg.Kubelet.DeepCopy()
		SetDefaults(defaulted)
		if diff := cmp.Diff(&cfg.Kubelet, defaulted); diff != "" {
			t.Fatalf("defaults change an accepted configuration (-loaded +defaulted):\n%s", diff)
		}
		again := encodeKubeletConfiguration(t, &cfg.Kubelet)
		cfg2, err := Load(context.Background(), fuzzFlags(false), mapFSEnv(fstest.MapFS{"etc/berth/config.yaml": {Data: again}}))
		if err != nil {
			t.Fatalf("accepted configuration, encoded as\n%s\nis rejected: %v", again, err)
		}
		if diff := cmp.Diff(cfg, cfg2); diff != "" {
			t.Fatalf("configuration changes when encoded and loaded again (-first +again):\n%s", diff)
		}
	})
}

// encodeKubeletConfiguration writes kc as a JSON configuration file.
func encodeKubeletConfiguration(t *testing.T, kc *kubeletconfigv1beta1.KubeletConfiguration) []byte {
	t.Helper()
	kc = kc.DeepCopy()
	kc.APIVersion = kubeletconfigv1beta1.SchemeGroupVersion.String()
	kc.Kind = kubeletConfigKind
	data, err := json.Marshal(kc)
	if err != nil {
		t.Fatalf("encode configuration: %v", err)
	}
	// omitempty drops explicitly empty maps and lists ("evictionHard: {}"),
	// which a file can state and berth keeps: write them back.
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("decode configuration: %v", err)
	}
	v := reflect.ValueOf(kc).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if (f.Kind() == reflect.Map || f.Kind() == reflect.Slice) && !f.IsNil() && f.Len() == 0 && name != "" {
			obj[name] = f.Interface()
		}
	}
	if data, err = json.Marshal(obj); err != nil {
		t.Fatalf("encode configuration: %v", err)
	}
	return data
}
