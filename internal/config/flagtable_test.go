package config

import (
	"go/ast"
	"go/token"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// upstreamFlagType is the pflag type name each upstream registration gives
// its flag: by method, or for Var by the value's constructor or type.
func upstreamFlagType(u upstreamFlag) string {
	byFunc := map[string]string{
		"StringVar": "string", "BoolVar": "bool", "Int32Var": "int32", "Int64Var": "int64",
		"DurationVar": "duration", "StringSliceVar": "stringSlice",
	}
	if t, ok := byFunc[u.Func]; ok {
		return t
	}
	return map[string]string{
		"NewMapStringString":                    "mapStringString",
		"NewLangleSeparatedMapStringString":     "mapStringString",
		"NewMapStringStringNoSplit":             "mapStringString",
		"NewMapStringBool":                      "mapStringBool",
		"NewColonSeparatedMultimapStringString": "colonSeparatedMultimapStringString",
		"IPVar":                                 "ip",
		"ReservedMemoryVar":                     "reserved-memory",
		"RegisterWithTaintsVar":                 "[]v1.Taint",
		"ident:bindableNodeLabels":              "mapStringString",
		// component-base's own values, which berth registers through the
		// same logsapi.AddFlags.
		"VerbosityLevelPflag":       "Level",
		"VModuleConfigurationPflag": "pattern=N,...",
		"field":                     "quantity",
	}[u.Value]
}

// goPath turns the JSON path of a KubeletConfiguration field into its Go
// field path, skipping inlined embedded structs.
func goPath(t *testing.T, jsonPath string) string {
	t.Helper()
	typ := reflect.TypeOf(kubeletconfigv1beta1.KubeletConfiguration{})
	var parts []string
	for _, name := range strings.Split(jsonPath, ".") {
		idx, ok := fieldIndex(typ, name)
		if !ok {
			t.Fatalf("field %q: no %q in %s", jsonPath, name, typ)
		}
		f := typ.FieldByIndex(idx)
		parts = append(parts, f.Name)
		typ = f.Type
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
	}
	return strings.Join(parts, ".")
}

func registeredFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	NewFlags().AddFlags(fs)
	return fs
}

// TestFlagTableMatchesUpstream pins every flag of the v1.37 kubelet against
// upstream's options.go: berth registers it under the same name and type,
// a flag bound to a KubeletConfiguration field sets the same field, and a
// KubeletFlags flag has upstream's default (NewKubeletFlags). Config flags'
// defaults are the field defaults (SetDefaults, over the legacy defaults
// of a command line without --config).
func TestFlagTableMatchesUpstream(t *testing.T) {
	upstream := upstreamFlags(t)
	fs := registeredFlags(t)
	fields := map[string]string{}
	for _, c := range configFlags() {
		fields[c.Name] = c.Field
	}
	plain := map[string]bool{}
	for _, s := range plainFlagSupport() {
		plain[strings.TrimPrefix(s.Name, "--")] = true
	}
	newFlags := upstreamsrc.New(t).Func("k8s.io/kubernetes/cmd/kubelet/app/options", "NewKubeletFlags").CompositeLits()[0].Fields()
	for name, u := range upstream {
		fl := fs.Lookup(name)
		if fl == nil {
			t.Errorf("--%s: upstream registers it, berth does not", name)
			continue
		}
		if want := upstreamFlagType(u); fl.Value.Type() != want {
			t.Errorf("--%s: type %q, upstream %q (%s %s)", name, fl.Value.Type(), want, u.Func, u.Value)
		}
		switch u.Root {
		case "c":
			want := u.Path
			if u.Logging {
				want = "Logging." + want
			}
			if fields[name] == "" {
				t.Errorf("--%s: upstream sets KubeletConfiguration %s, berth's configFlags has no field", name, want)
			} else if got := goPath(t, fields[name]); got != want {
				t.Errorf("--%s: sets %s (%s), upstream sets %s", name, fields[name], got, want)
			}
		case "f", "o":
			if fields[name] != "" || !plain[name] {
				t.Errorf("--%s: upstream's KubeletFlags.%s, not a config field: want it in plainFlagSupport only", name, u.Path)
			}
			if want := kubeletFlagsDefault(newFlags, u.Path, fl.Value.Type()); fl.DefValue != want {
				t.Errorf("--%s: default %q, upstream NewKubeletFlags %q", name, fl.DefValue, want)
			}
		case "cadvisor":
			// Default: pkg/kubelet/cadvisor's defaultHousekeepingInterval.
			v := upstreamsrc.New(t).Value("k8s.io/kubernetes/pkg/kubelet/cadvisor", "defaultHousekeepingInterval")
			if want := secondsExpr(t, v.Node); fl.DefValue != want || !plain[name] {
				t.Errorf("--%s: default %q, upstream %q; want it in plainFlagSupport", name, fl.DefValue, want)
			}
		default:
			t.Errorf("--%s: upstream binds it to %s.%s, which this test does not know", name, u.Root, u.Path)
		}
	}
	for _, c := range configFlags() {
		if _, ok := upstream[c.Name]; !ok {
			t.Errorf("--%s: in configFlags, not registered upstream", c.Name)
		}
	}
}

// kubeletFlagsDefault is the flag default NewKubeletFlags gives field, as
// pflag prints it: the literal's value, or the type's zero value.
func kubeletFlagsDefault(lit map[string]upstreamsrc.Node, field, typ string) string {
	zero := map[string]string{"string": "", "bool": "false", "int32": "0", "duration": "0s", "mapStringString": ""}
	n, ok := lit[field]
	if !ok || typ == "mapStringString" {
		return zero[typ]
	}
	switch typ {
	case "string":
		return n.AsString()
	case "int32":
		return strconv.FormatInt(n.AsInt(), 10)
	case "duration":
		return time.Duration(n.Fields()["Duration"].AsInt()).String()
	}
	return "?" + typ
}

// sampleValue is a valid value, other than the default, for a flag of
// pflag type typ.
func sampleValue(fl *pflag.Flag) string {
	switch fl.Value.Type() {
	case "int32", "int64", "Level":
		return "7"
	case "duration":
		return "7s"
	case "ip":
		return "10.1.2.3"
	case "stringSlice":
		return "a,b"
	case "mapStringString":
		if fl.Name == "eviction-hard" || fl.Name == "eviction-soft" {
			return "memory.available<1Gi"
		}
		return "a=b"
	case "mapStringBool":
		return "SomeGate=true"
	case "colonSeparatedMultimapStringString":
		return "a:b"
	case "reserved-memory":
		return "0:memory=1Gi"
	case "[]v1.Taint":
		return "a=b:NoSchedule"
	case "pattern=N,...":
		return "a=1"
	case "quantity":
		return "1Ki"
	}
	return "x-" + fl.DefValue
}

// TestEveryConfigFlagSetsItsField: given on the command line, each config
// flag changes exactly the KubeletConfiguration field configFlags names,
// over a file that sets nothing.
func TestEveryConfigFlagSetsItsField(t *testing.T) {
	base := &kubeletconfigv1beta1.KubeletConfiguration{}
	SetDefaults(base)
	for _, c := range configFlags() {
		t.Run(c.Name, func(t *testing.T) {
			f := NewFlags()
			fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f.AddFlags(fs)
			value := sampleValue(fs.Lookup(c.Name))
			if fs.Lookup(c.Name).Value.Type() == "bool" {
				value = strconv.FormatBool(!valueAt(t, base, c.Field).Bool())
			}
			if err := fs.Parse([]string{"--" + c.Name + "=" + value}); err != nil {
				t.Fatalf("parse: %v", err)
			}
			kc := base.DeepCopy()
			setBy, _ := applyFlags(kc, f)
			if setBy[c.Field] != "--"+c.Name {
				t.Errorf("setBy = %v, want %s set by --%s", setBy, c.Field, c.Name)
			}
			want := base.DeepCopy()
			copyPath(reflect.ValueOf(want).Elem(), reflect.ValueOf(kc).Elem(), c.Field)
			if !apiequality.Semantic.DeepEqual(kc, want) {
				t.Errorf("--%s=%s changed more than %s", c.Name, value, c.Field)
			}
			if apiequality.Semantic.DeepEqual(kc, base) {
				t.Errorf("--%s=%s did not change %s", c.Name, value, c.Field)
			}
		})
	}
}

// valueAt returns the value at the JSON path of kc, pointers followed.
func valueAt(t *testing.T, kc *kubeletconfigv1beta1.KubeletConfiguration, path string) reflect.Value {
	t.Helper()
	v := reflect.ValueOf(kc).Elem()
	for _, name := range strings.Split(path, ".") {
		idx, ok := fieldIndex(v.Type(), name)
		if !ok {
			t.Fatalf("no field %q in %s", name, v.Type())
		}
		v = v.FieldByIndex(idx)
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v
}

// secondsExpr evaluates "N * time.Second" to a duration string; upstreamsrc
// does not resolve the standard library's constants.
func secondsExpr(t *testing.T, n ast.Node) string {
	t.Helper()
	if e, ok := n.(*ast.BinaryExpr); ok && e.Op == token.MUL {
		lit, okX := e.X.(*ast.BasicLit)
		sel, okY := e.Y.(*ast.SelectorExpr)
		if okX && okY && sel.Sel.Name == "Second" {
			if s, err := strconv.Atoi(lit.Value); err == nil {
				return (time.Duration(s) * time.Second).String()
			}
		}
	}
	t.Fatalf("%T is not N * time.Second: update the test", n)
	return ""
}
