package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// kubeletFieldNames returns the JSON names of every top-level field of the
// upstream KubeletConfiguration type.
func kubeletFieldNames() []string {
	t := reflect.TypeFor[kubeletconfigv1beta1.KubeletConfiguration]()
	var names []string
	for i := range t.NumField() {
		if f := t.Field(i); !f.Anonymous {
			names = append(names, jsonName(f))
		}
	}
	return names
}

func TestFieldSupportCoversEveryField(t *testing.T) {
	var listed []string
	for _, f := range kubeletFieldSupport() {
		listed = append(listed, f.Name)
		if f.Reason == "" {
			t.Errorf("field %q has no reason", f.Name)
		}
		if f.Support != Honoured && f.Support != Accepted && f.Support != DefaultMatches && f.Support != NotImplemented {
			t.Errorf("field %q has a flag-only status %q", f.Name, f.Support)
		}
	}
	// Same order as upstream, so the doc reads like the upstream reference.
	if diff := cmp.Diff(kubeletFieldNames(), listed); diff != "" {
		t.Errorf("kubeletFieldSupport must list every KubeletConfiguration field once, in order (-upstream +listed):\n%s", diff)
	}
}

func TestFlagSupportCoversEveryFlag(t *testing.T) {
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	NewFlags().AddFlags(fs)
	var registered []string
	fs.VisitAll(func(f *pflag.Flag) { registered = append(registered, "--"+f.Name) })
	var listed []string
	for _, f := range flagSupport() {
		listed = append(listed, f.Name)
	}
	sort.Strings(listed)
	if diff := cmp.Diff(registered, listed); diff != "" {
		t.Errorf("flagSupport must list every registered flag (-registered +listed):\n%s", diff)
	}
}

// TestCompatDoc keeps docs/config-compat.md equal to CompatDoc, so the doc
// cannot drift from the code. Run with -update to regenerate it.
func TestCompatDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "config-compat.md")
	got := CompatDoc()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (run with -update to create it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is stale, run go test ./internal/config -run TestCompatDoc -update (-file +code):\n%s", path, diff)
	}
	for _, f := range kubeletFieldSupport() {
		if f.Support == Honoured && !strings.Contains(got, "| `"+f.Name+"` | honoured |") {
			t.Errorf("honoured field %q is missing from the doc", f.Name)
		}
	}
}

// mutate changes v (settable) to some other value of its type.
func mutate(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		mutate(t, v.Elem())
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint32:
		v.SetUint(v.Uint() + 7)
	case reflect.Float64:
		v.SetFloat(v.Float() + 0.05)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				mutate(t, v.Field(i))
				return
			}
		}
		t.Fatalf("cannot mutate struct %s", v.Type())
	default:
		t.Fatalf("cannot mutate kind %s", v.Kind())
	}
}

// TestEveryUnhonouredFieldIsRejected changes each field in turn and checks
// that exactly the fields berth does not honour are reported.
func TestEveryUnhonouredFieldIsRejected(t *testing.T) {
	support := map[string]FieldSupport{}
	for _, f := range kubeletFieldSupport() {
		support[f.Name] = f
	}
	typ := reflect.TypeFor[kubeletconfigv1beta1.KubeletConfiguration]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous {
			continue
		}
		name := jsonName(f)
		t.Run(name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			mutate(t, reflect.ValueOf(kc).Elem().Field(i))
			var got []string
			for _, p := range unsupportedFields(kc) {
				got = append(got, p.msg)
			}
			var want []string
			if row := support[name]; row.Support != Honoured && row.Support != Accepted {
				def := &kubeletconfigv1beta1.KubeletConfiguration{}
				SetDefaults(def)
				want = []string{fmt.Sprintf("kubeletConfiguration field %q: %s is not supported by berth yet (only the default %s is accepted): %s",
					name, fieldValue(kc, name), fieldValue(def, name), row.Reason)}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unsupportedFields after changing %s (-want +got):\n%s", name, diff)
			}
		})
	}
}

// TestHelpStatesSupport: every flag's help says what berth does with it,
// from flagSupport, so the help cannot claim more (or less) than the code.
func TestHelpStatesSupport(t *testing.T) {
	fs := registeredFlags(t)
	for _, s := range flagSupport() {
		fl := fs.Lookup(strings.TrimPrefix(s.Name, "--"))
		if fl == nil {
			t.Errorf("%s: not registered", s.Name)
			continue
		}
		if want := "berth: " + s.Support.String() + "; " + s.Reason; !strings.Contains(fl.Usage, want) {
			t.Errorf("%s: usage %q does not say %q", s.Name, fl.Usage, want)
		}
		if s.Support == Honoured && strings.Contains(fl.Usage, "not supported") {
			t.Errorf("%s is honoured, its usage says %q", s.Name, fl.Usage)
		}
	}
}
