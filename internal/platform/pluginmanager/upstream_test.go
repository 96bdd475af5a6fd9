package pluginmanager

import (
	"go/ast"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upPluginManager = "k8s.io/kubernetes/pkg/kubelet/pluginmanager"
	upExecutor      = upPluginManager + "/operationexecutor"
	upBackoff       = "k8s.io/kubernetes/pkg/util/goroutinemap/exponentialbackoff"
)

// TestNumbersMatchUpstream pins the back-off of failed operations (the
// goroutine map's exponential back-off the operation executor runs them
// in), the registration calls' timeouts and the directory's name.
func TestNumbersMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	getInfo := src.Func(upExecutor, "GenerateRegisterPluginFunc").Calls("context", "WithTimeout")
	if len(getInfo) != 1 {
		t.Fatalf("upstream's GenerateRegisterPluginFunc has %d context.WithTimeout calls, want 1 (GetInfo's)", len(getInfo))
	}
	for name, tc := range map[string]struct {
		ours     time.Duration
		upstream upstreamsrc.Node
	}{
		"initial retry delay": {initialRetryDelay, src.Value(upBackoff, "initialDurationBeforeRetry")},
		"max retry delay":     {maxRetryDelay, src.Value(upBackoff, "maxDurationBeforeRetry")},
		"dial timeout":        {dialTimeout, src.Value(upExecutor, "dialTimeoutDuration")},
		"notify timeout":      {notifyTimeout, src.Value(upExecutor, "notifyTimeoutDuration")},
		"GetInfo timeout":     {getInfoTimeout, getInfo[0].Arg(1)},
	} {
		if up := tc.upstream.AsDuration(); up != tc.ours {
			t.Errorf("%s %v, upstream %v", name, tc.ours, up)
		}
	}
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/kubeletconfig", "DefaultKubeletPluginsRegistrationDirName").AsString(); up != DirName {
		t.Errorf("directory %q, upstream %q", DirName, up)
	}
}

// TestStatusMessagesMatchUpstream pins what a refused plugin is told to
// the literals of upstream's GenerateRegisterPluginFunc.
func TestStatusMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func(upExecutor, "GenerateRegisterPluginFunc").StringLiterals()
	for _, msg := range []string{msgNoHandler, msgInvalid, msgRefused} {
		if !slices.Contains(lits, msg) {
			t.Errorf("upstream's GenerateRegisterPluginFunc has no literal %q", msg)
		}
	}
}

// TestMetricMatchesUpstream pins plugin_manager_total_plugins: name,
// help, labels and the states' names.
func TestMetricMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = upPluginManager + "/metrics"
	desc := src.Value(pkg, "totalPluginsDesc")
	ours := totalPlugins.String()
	for _, want := range []string{
		`fqName: "` + desc.Arg(0).AsString() + `"`,
		`help: "[ALPHA] ` + desc.Arg(1).AsString() + `"`,
		`variableLabels: {` + strings.Join(desc.Arg(2).AsStrings(), ",") + `}`,
	} {
		if !strings.Contains(ours, want) {
			t.Errorf("metric %s lacks upstream's %s", ours, want)
		}
	}
	if sel, ok := desc.Arg(4).Node.(*ast.SelectorExpr); !ok || sel.Sel.Name != "ALPHA" {
		t.Errorf("upstream's plugin_manager_total_plugins is no longer ALPHA: update the help prefix")
	}
	lits := src.Func(pkg, "getPluginCount").StringLiterals()
	for _, state := range []string{stateDesired, stateActual} {
		if !slices.Contains(lits, state) {
			t.Errorf("upstream's getPluginCount has no state %q", state)
		}
	}
}

// TestHandlerMatchesUpstream: Handler has upstream's PluginHandler's
// methods, each with as many parameters (a consumer's handler is one
// upstream's would be).
func TestHandlerMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	up := map[string]int{}
	for _, f := range src.Files(upPluginManager + "/cache") {
		ast.Inspect(f.Node, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "PluginHandler" {
				return true
			}
			for _, m := range ts.Type.(*ast.InterfaceType).Methods.List {
				params := 0
				for _, p := range m.Type.(*ast.FuncType).Params.List {
					params += max(1, len(p.Names))
				}
				up[m.Names[0].Name] = params
			}
			return false
		})
	}
	ours := map[string]int{}
	h := reflect.TypeFor[Handler]()
	for i := range h.NumMethod() {
		ours[h.Method(i).Name] = h.Method(i).Type.NumIn()
	}
	if diff := cmp.Diff(up, ours); diff != "" {
		t.Errorf("Handler's methods and their parameter counts (-upstream +ours):\n%s", diff)
	}
}
