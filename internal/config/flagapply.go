package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// applyFlags copies the KubeletConfiguration fields whose flags were given
// over kc (flags win over the file and the drop-ins, as upstream), and
// refuses the flags berth does not honour at non-default values. It
// returns which flag set which field, for naming the flag in problems.
func applyFlags(kc *kubeletconfigv1beta1.KubeletConfiguration, flags *Flags) (map[string]string, []problem) {
	setBy := map[string]string{}
	if flags.fs == nil {
		return setBy, nil
	}
	fields := map[string]string{}
	for _, c := range configFlags() {
		fields[c.Name] = c.Field
	}
	flags.fs.Visit(func(fl *pflag.Flag) {
		if field := fields[fl.Name]; field != "" {
			copyPath(reflect.ValueOf(kc).Elem(), reflect.ValueOf(&flags.kubelet).Elem(), field)
			setBy[field] = "--" + fl.Name
		}
	})
	if flags.SeccompDefault {
		// Upstream enables seccompDefault when either the flag or the field does.
		kc.SeccompDefault = ptr.To(true)
	}
	return setBy, unsupportedFlags(flags.fs)
}

// unsupportedFlags refuses every flag that is not a KubeletConfiguration
// field and that berth does not honour: Rejected ones whenever given, the
// others when given a value other than their default.
func unsupportedFlags(fs *pflag.FlagSet) []problem {
	var ps []problem
	for _, s := range plainFlagSupport() {
		fl := fs.Lookup(strings.TrimPrefix(s.Name, "--"))
		if s.Support == Honoured || s.Support == Accepted || fl == nil || !fl.Changed {
			continue
		}
		switch {
		case s.Support == Rejected:
			ps = append(ps, flagProblem(fl.Name, "%s", s.Reason))
		case fl.Value.String() != fl.DefValue:
			ps = append(ps, flagProblem(fl.Name, "%s", notSupportedText(strconv.Quote(fl.Value.String()), strconv.Quote(fl.DefValue), s.Reason)))
		}
	}
	return ps
}

func flagProblem(name, format string, args ...any) problem {
	return problem{key: "flag " + name, msg: fmt.Sprintf("flag --%s: %s", name, fmt.Sprintf(format, args...))}
}

// sources says where the fields came from: the flag that set a field
// (JSON path, from applyFlags) and the file that set a top-level field
// last (from loadKubeletConfiguration).
type sources struct {
	flags map[string]string
	files map[string]string
}

// name rewrites the problems about fields so that they say where the value
// came from: the flag that set it (the user typed the flag, not the field),
// else the --config file or drop-in that set it. This is the one place the
// origin of a value is put into a message.
func (s sources) name(ps []problem) []problem {
	for i, p := range ps {
		if p.field == "" {
			continue
		}
		if flag, ok := s.flag(p.field); ok {
			ps[i].msg = "flag " + flag + " sets " + p.msg
			continue
		}
		top, _, _ := strings.Cut(p.field, ".")
		if file, ok := s.files[top]; ok {
			ps[i].msg = fmt.Sprintf("kubeletConfiguration field %q (set in %s): %s", p.field, file, p.detail)
		}
	}
	return ps
}

func (s sources) flag(field string) (string, bool) {
	for f, flag := range s.flags {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(f, field+".") {
			return flag, true
		}
	}
	return "", false
}

// copyPath sets the field at the JSON path (dot-separated) of dst to the
// value of the same field of src; a pointer is copied to a new pointer.
func copyPath(dst, src reflect.Value, path string) {
	for _, name := range strings.Split(path, ".") {
		idx, ok := fieldIndex(dst.Type(), name)
		if !ok {
			panic(fmt.Sprintf("copy field %q: no field %q in %s", path, name, dst.Type()))
		}
		dst, src = dst.FieldByIndex(idx), src.FieldByIndex(idx)
	}
	if src.Kind() == reflect.Pointer && !src.IsNil() {
		p := reflect.New(src.Type().Elem())
		p.Elem().Set(src.Elem())
		src = p
	}
	dst.Set(src)
}

// fieldIndex finds the field of struct type t whose JSON name is name,
// looking into inlined embedded structs.
func fieldIndex(t reflect.Type, name string) ([]int, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if idx, ok := fieldIndex(f.Type, name); ok {
				return append([]int{i}, idx...), true
			}
			continue
		}
		if f.IsExported() && jsonName(f) == name {
			return []int{i}, true
		}
	}
	return nil, false
}
