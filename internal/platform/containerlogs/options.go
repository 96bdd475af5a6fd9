package containerlogs

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Options say what to read from a container's log. The zero value reads
// everything once.
type Options struct {
	// Follow keeps reading as the container writes, until it exits.
	Follow bool
	// TailLines, when >= 0, starts at the last TailLines lines; -1 reads all.
	TailLines int64
	// Since skips entries written before it; zero skips none.
	Since time.Time
	// Timestamps prefixes every line with its RFC3339Nano time and a space.
	Timestamps bool
	// LimitBytes stops after this many bytes of output; <= 0 means no limit.
	LimitBytes int64
	// Stream selects stdout or stderr; empty means both.
	Stream Stream
}

// ParseQuery decodes the query of a /containerLogs request into the v1
// PodLogOptions it names, as upstream does: "tail" is the old name of
// tailLines ("all" meaning no limit), booleans are false only when absent,
// "0" or "false", and the stream defaults to All.
func ParseQuery(q url.Values) (*corev1.PodLogOptions, error) {
	o := &corev1.PodLogOptions{
		Container:  q.Get("container"),
		Follow:     queryBool(q, "follow"),
		Previous:   queryBool(q, "previous"),
		Timestamps: queryBool(q, "timestamps"),

		InsecureSkipTLSVerifyBackend: queryBool(q, "insecureSkipTLSVerifyBackend"),
	}
	tail := q.Get("tailLines")
	if t := q.Get("tail"); t != "" {
		tail = t
		if t == "all" {
			tail = ""
		}
	}
	var err error
	if o.TailLines, err = queryInt(tail); err != nil {
		return nil, fmt.Errorf("parse tailLines: %w", err)
	}
	if o.LimitBytes, err = queryInt(q.Get("limitBytes")); err != nil {
		return nil, fmt.Errorf("parse limitBytes: %w", err)
	}
	if o.SinceSeconds, err = queryInt(q.Get("sinceSeconds")); err != nil {
		return nil, fmt.Errorf("parse sinceSeconds: %w", err)
	}
	if s := q.Get("sinceTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("parse sinceTime: %w", err)
		}
		o.SinceTime = &metav1.Time{Time: t}
	}
	o.Stream = ptr.To(corev1.LogStreamAll)
	if s, ok := q["stream"]; ok && len(s) > 0 {
		o.Stream = ptr.To(s[0])
	}
	return o, nil
}

func queryBool(q url.Values, key string) bool {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

func queryInt(s string) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// Validate checks the options as upstream's ValidatePodLogOptions does
// (with stream selection allowed) and joins every problem found.
func Validate(o *corev1.PodLogOptions) error {
	var errs []error
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, fmt.Errorf("tailLines: Invalid value: %d: must be greater than or equal to 0", *o.TailLines))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, fmt.Errorf("limitBytes: Invalid value: %d: must be greater than 0", *o.LimitBytes))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, errors.New("at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, fmt.Errorf("sinceSeconds: Invalid value: %d: must be greater than 0", *o.SinceSeconds))
	}
	if o.Stream != nil {
		switch s := *o.Stream; s {
		case corev1.LogStreamAll:
		case corev1.LogStreamStdout, corev1.LogStreamStderr:
			if o.TailLines != nil {
				errs = append(errs, errors.New("`tailLines` and specific `stream` are mutually exclusive for now"))
			}
		default:
			errs = append(errs, fmt.Errorf("stream: Unsupported value: %q: supported values: %q, %q, %q",
				s, corev1.LogStreamAll, corev1.LogStreamStdout, corev1.LogStreamStderr))
		}
	}
	return errors.Join(errs...)
}

// maxSinceSeconds is the longest look-back a time.Duration holds, some 292
// years.
const maxSinceSeconds = math.MaxInt64 / int64(time.Second)

// FromPodLogOptions turns validated PodLogOptions into reader Options;
// sinceSeconds counts back from now.
func FromPodLogOptions(o *corev1.PodLogOptions, now time.Time) Options {
	out := Options{Follow: o.Follow, Timestamps: o.Timestamps, TailLines: -1}
	if o.TailLines != nil {
		out.TailLines = *o.TailLines
	}
	if o.LimitBytes != nil {
		out.LimitBytes = *o.LimitBytes
	}
	switch {
	case o.SinceSeconds != nil && *o.SinceSeconds > maxSinceSeconds:
		// Reaches back before any log: read everything. (Upstream's
		// now.Add(-time.Duration(s) * time.Second) overflows here and can
		// land after now, which skips every entry.)
	case o.SinceSeconds != nil:
		out.Since = now.Add(-time.Duration(*o.SinceSeconds) * time.Second)
	case o.SinceTime != nil:
		out.Since = o.SinceTime.Time
	}
	if o.Stream != nil {
		switch *o.Stream {
		case corev1.LogStreamStdout:
			out.Stream = Stdout
		case corev1.LogStreamStderr:
			out.Stream = Stderr
		}
	}
	return out
}
