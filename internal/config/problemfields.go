package config

import (
	"slices"
	"strings"
)

// Fields returns what the problems of e are about, sorted and without
// duplicates: the JSON name of a KubeletConfiguration field ("evictionHard",
// "logging.format"; a field set by a flag is named by the field), a flag that
// is not a field with its dashes ("--runtime-cgroups"), or another subject
// as it is ("node name"). Callers that must tell what blocks a start (a
// distribution's configuration, a migration tool) read this instead of
// parsing the messages.
func (e *ValidationError) Fields() []string {
	fields := make([]string, 0, len(e.subjects))
	for _, s := range e.subjects {
		fields = append(fields, subjectName(s))
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// subjectName turns a problem's key ("field x", "flag y") into the name
// Fields reports.
func subjectName(key string) string {
	if field, ok := strings.CutPrefix(key, "field "); ok {
		return field
	}
	if flag, ok := strings.CutPrefix(key, "flag "); ok {
		return "--" + flag
	}
	return key
}
