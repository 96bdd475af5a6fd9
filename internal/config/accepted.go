package config

import (
	"strings"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// acceptedSettings returns, for every Accepted field or flag set to a value
// other than its default, the name and the reason it has no effect, for Load
// to log.
func acceptedSettings(kc *kubeletconfigv1beta1.KubeletConfiguration, fs *pflag.FlagSet) [][2]string {
	def := &kubeletconfigv1beta1.KubeletConfiguration{}
	SetDefaults(def)
	rows := map[string]FieldSupport{}
	for _, f := range kubeletFieldSupport() {
		rows[f.Name] = f
	}
	var out [][2]string
	for _, name := range differingFields(kc, def, "") {
		if row := rows[name]; row.Support == Accepted {
			out = append(out, [2]string{name, row.Reason})
		}
	}
	for _, s := range plainFlagSupport() {
		if fs == nil { // Flags built without a flag set: no flag was given
			break
		}
		fl := fs.Lookup(strings.TrimPrefix(s.Name, "--"))
		if s.Support == Accepted && fl != nil && fl.Changed && fl.Value.String() != fl.DefValue {
			out = append(out, [2]string{s.Name, s.Reason})
		}
	}
	return out
}
