package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// ValidationError reports every problem found in a configuration, sorted by
// the field or flag it concerns. It is not modified after Load returns it.
type ValidationError struct {
	// Problems are complete messages, each naming its field or flag.
	Problems []string
	// subjects are what each problem is about, for Fields (problemfields.go).
	subjects []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n  - %s", len(e.Problems), strings.Join(e.Problems, "\n  - "))
}

// problem is one validation finding; key orders findings in the report.
// A problem about a KubeletConfiguration field also carries the field's
// JSON path and the message without it, for sources.name.
type problem struct {
	key string
	msg string

	field, detail string
}

type problems []problem

func (ps *problems) addAll(more []problem) { *ps = append(*ps, more...) }

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].key != ps[j].key {
			return ps[i].key < ps[j].key
		}
		return ps[i].msg < ps[j].msg
	})
	msgs, subjects := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		msgs[i], subjects[i] = p.msg, p.key
	}
	return &ValidationError{Problems: msgs, subjects: subjects}
}

func fieldProblem(field string, format string, args ...any) problem {
	detail := fmt.Sprintf(format, args...)
	return problem{
		key:   "field " + field,
		msg:   fmt.Sprintf("kubeletConfiguration field %q: %s", field, detail),
		field: field, detail: detail,
	}
}

// validateKubelet checks the values of the fields berth honours.
func validateKubelet(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	for name, d := range map[string]metav1.Duration{
		"syncFrequency":         kc.SyncFrequency,
		"fileCheckFrequency":    kc.FileCheckFrequency,
		"httpCheckFrequency":    kc.HTTPCheckFrequency,
		"runtimeRequestTimeout": kc.RuntimeRequestTimeout,
	} {
		if d.Duration < 0 {
			ps = append(ps, fieldProblem(name, "invalid value %q: must not be negative", d.Duration.String()))
		}
	}
	if kc.HealthzPort != nil {
		ps = append(ps, checkPort("healthzPort", *kc.HealthzPort)...)
	}
	ps = append(ps, checkPort("readOnlyPort", kc.ReadOnlyPort)...)
	for name, addr := range map[string]string{"address": kc.Address, "healthzBindAddress": kc.HealthzBindAddress} {
		if net.ParseIP(addr) == nil {
			ps = append(ps, fieldProblem(name, "invalid value %q: must be an IP address", addr))
		}
	}
	if kc.CgroupDriver != "cgroupfs" && kc.CgroupDriver != "systemd" {
		ps = append(ps, fieldProblem("cgroupDriver", "invalid value %q: must be \"cgroupfs\" or \"systemd\"", kc.CgroupDriver))
	}
	if err := checkEndpoint(kc.ContainerRuntimeEndpoint); err != nil {
		ps = append(ps, fieldProblem("containerRuntimeEndpoint", "invalid value %q: %v", kc.ContainerRuntimeEndpoint, err))
	}
	if kc.ImageServiceEndpoint != "" {
		if err := checkEndpoint(kc.ImageServiceEndpoint); err != nil {
			ps = append(ps, fieldProblem("imageServiceEndpoint", "invalid value %q: %v", kc.ImageServiceEndpoint, err))
		}
	}
	if kc.StaticPodURL != "" {
		if err := checkURL(kc.StaticPodURL); err != nil {
			ps = append(ps, fieldProblem("staticPodURL", "invalid value %q: %v", kc.StaticPodURL, err))
		}
	}
	for name := range kc.StaticPodURLHeader {
		if !isHTTPToken(name) {
			ps = append(ps, fieldProblem("staticPodURLHeader", "invalid header name %q", name))
		}
	}
	switch kc.ConfigMapAndSecretChangeDetectionStrategy {
	case kubeletconfigv1beta1.WatchChangeDetectionStrategy, kubeletconfigv1beta1.TTLCacheChangeDetectionStrategy, kubeletconfigv1beta1.GetChangeDetectionStrategy:
	default:
		ps = append(ps, fieldProblem("configMapAndSecretChangeDetectionStrategy", "invalid value %q: must be Watch, Cache or Get", kc.ConfigMapAndSecretChangeDetectionStrategy))
	}
	if kc.MaxPods < 0 {
		ps = append(ps, fieldProblem("maxPods", "invalid value %d: must not be negative", kc.MaxPods))
	}
	if _, err := sysctl.Unsafe(kc.AllowedUnsafeSysctls); err != nil {
		ps = append(ps, fieldProblem("allowedUnsafeSysctls", "%v", err))
	}
	return append(ps, validateDNS(kc)...)
}

// validateDNS checks what pods' resolv.conf is built from: clusterDNS
// entries are nameserver IPs, clusterDomain a DNS subdomain.
func validateDNS(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	for _, ip := range kc.ClusterDNS {
		if net.ParseIP(ip) == nil {
			ps = append(ps, fieldProblem("clusterDNS", "invalid value %q: must be an IP address", ip))
		}
	}
	if d := kc.ClusterDomain; d != "" {
		if msgs := validation.IsDNS1123Subdomain(d); len(msgs) > 0 {
			ps = append(ps, fieldProblem("clusterDomain", "invalid value %q: %s", d, strings.Join(msgs, "; ")))
		}
	}
	return ps
}

func checkPort(field string, port int32) []problem {
	if port < 0 || port > 65535 {
		return []problem{fieldProblem(field, "invalid value %d: must be between 0 and 65535 (0 disables it)", port)}
	}
	return nil
}

// checkEndpoint accepts what berth's CRI client dials: a unix socket given as
// unix:///absolute/path or as a bare absolute path.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return fmt.Errorf("must not be empty")
	}
	p := endpoint
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		p = rest
	} else if strings.Contains(endpoint, "://") {
		return fmt.Errorf("only unix:// endpoints are supported")
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("the socket path must be absolute")
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme must be http or https")
	}
	if u.Host == "" {
		return fmt.Errorf("host is missing")
	}
	return nil
}

// isHTTPToken reports whether s is a valid HTTP header name (RFC 7230 token).
func isHTTPToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 127 || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// unsupportedFields rejects every field berth does not honour whose value
// differs from its default. It walks the struct by reflection, so a field
// cannot be forgotten: whatever is not Honoured in kubeletFieldSupport
// (including fields upstream adds later) must stay at its default.
func unsupportedFields(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	def := &kubeletconfigv1beta1.KubeletConfiguration{}
	SetDefaults(def)
	rows := map[string]FieldSupport{}
	for _, f := range kubeletFieldSupport() {
		rows[f.Name] = f
	}
	var ps []problem
	for _, name := range differingFields(kc, def, "") {
		if row := rows[name]; row.Support != Honoured && row.Support != Accepted {
			ps = append(ps, notSupported(name, fieldValue(kc, name), fieldValue(def, name), row.Reason))
		}
	}
	return ps
}

// notSupported is a refused value of a field: the field, the value given,
// the value accepted and why (the support row's reason).
func notSupported(field, given, accepted, reason string) problem {
	return fieldProblem(field, "%s", notSupportedText(given, accepted, reason))
}

// notSupportedText is the one wording of a refused value, of a field or of
// a flag.
func notSupportedText(given, accepted, reason string) string {
	msg := fmt.Sprintf("%s is not supported by berth yet (only the default %s is accepted)", given, accepted)
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}

// fieldValue renders the field of the struct v points to whose JSON name is
// name, as JSON, shortened to a readable length.
func fieldValue(v any, name string) string {
	idx, ok := fieldIndex(reflect.TypeOf(v).Elem(), name)
	if !ok {
		return "?"
	}
	b, err := json.Marshal(reflect.ValueOf(v).Elem().FieldByIndex(idx).Interface())
	if err != nil {
		return "?"
	}
	const maxLen = 120
	if len(b) > maxLen {
		return string(b[:maxLen]) + "..."
	}
	return string(b)
}

// differingFields returns the JSON names (with prefix) of the top-level
// fields of the structs a and b point to whose values differ semantically.
// Embedded structs (TypeMeta) are skipped.
func differingFields(a, b any, prefix string) []string {
	av, bv := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var names []string
	for i := range av.NumField() {
		f := av.Type().Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		if !apiequality.Semantic.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			names = append(names, prefix+jsonName(f))
		}
	}
	return names
}

// jsonName is the JSON name of a struct field, from its json tag.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
