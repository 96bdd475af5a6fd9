package logquery

import (
	"fmt"
	"io/fs"
	"net/url"
	"reflect"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Upstream's limits.
const (
	MaxTailLines     = 100000
	MaxServiceLength = 256
	MaxServices      = 4
)

// serviceNameUnsafe is upstream's reServiceNameUnsafeCharacters: anything
// else than these characters cannot become a journalctl argument.
var serviceNameUnsafe = regexp.MustCompile(`[^a-zA-Z\-_.:0-9@]+`)

// Options are the query options of services.
type Options struct {
	SinceTime *time.Time
	UntilTime *time.Time
	// TailLines is how many lines from the end (0 to MaxTailLines).
	TailLines *int
	// Boot is the boot offset (0 the current boot, -1 the one before).
	Boot *int
	// Pattern is a Perl regular expression journalctl filters with.
	Pattern string
}

// Query is one node log query: services or (one) file, and options.
type Query struct {
	Services []string
	Files    []string
	Options
}

// Parse reads the query parameters as upstream's newNodeLogQuery: a
// query value with a / or \ is a file, another non-blank one a service.
// It returns nil without a query parameter nor an option (a plain file
// request), and the problems of parameters that do not parse.
func Parse(values url.Values) (*Query, field.ErrorList) {
	var errs field.ErrorList
	var q Query
	queries, ok := values["query"]
	for _, s := range queries {
		if strings.ContainsAny(s, `/\`) {
			q.Files = append(q.Files, s)
		} else if strings.TrimSpace(s) != "" {
			q.Services = append(q.Services, s)
		}
	}
	if ok && len(q.Files) == 0 && len(q.Services) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("query"), queries, "may not be empty"))
	}
	for _, t := range []struct {
		name string
		into **time.Time
	}{{"sinceTime", &q.SinceTime}, {"untilTime", &q.UntilTime}} {
		if v := values.Get(t.name); v != "" {
			parsed, err := time.Parse(time.RFC3339, v)
			if err != nil {
				errs = append(errs, field.Invalid(field.NewPath(t.name), v, "invalid time format"))
				continue
			}
			*t.into = &parsed
		}
	}
	for _, n := range []struct {
		name string
		into **int
	}{{"boot", &q.Boot}, {"tailLines", &q.TailLines}} {
		if v := values.Get(n.name); v != "" {
			parsed, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, field.Invalid(field.NewPath(n.name), v, err.Error()))
				continue
			}
			*n.into = &parsed
		}
	}
	q.Pattern = values.Get("pattern")
	if len(errs) > 0 {
		return nil, errs
	}
	if reflect.DeepEqual(q, Query{}) {
		return nil, nil
	}
	return &q, nil
}

// Validate checks q as upstream's validate; stat tells whether a file
// exists under the log directory (without leaving it).
func Validate(q *Query, stat func(name string) (fs.FileInfo, error)) field.ErrorList {
	errs := validateServices(q.Services)
	queryPath := field.NewPath("query")
	switch {
	case len(q.Files) == 0 && len(q.Services) == 0:
		errs = append(errs, field.Required(queryPath, "cannot be empty with options"))
	case len(q.Files) > 0 && len(q.Services) > 0:
		errs = append(errs, field.Invalid(queryPath, fmt.Sprintf("%v, %v", q.Files, q.Services), "cannot specify a file and service"))
	case len(q.Files) > 1:
		errs = append(errs, field.Invalid(queryPath, q.Files, "cannot specify more than one file"))
	case len(q.Files) == 1 && q.Options != (Options{}):
		errs = append(errs, field.Invalid(queryPath, q.Files, "cannot specify file with options"))
	case len(q.Files) == 1:
		if _, err := stat(q.Files[0]); err != nil {
			errs = append(errs, field.Invalid(queryPath, q.Files, err.Error()))
		}
	}
	if q.SinceTime != nil && q.UntilTime != nil && q.SinceTime.After(*q.UntilTime) {
		errs = append(errs, field.Invalid(field.NewPath("untilTime"), q.UntilTime, "must be after `sinceTime`"))
	}
	if q.Boot != nil && *q.Boot > 0 {
		errs = append(errs, field.Invalid(field.NewPath("boot"), *q.Boot, "must be less than 1"))
	}
	if q.TailLines != nil {
		if msgs := utilvalidation.IsInRange(*q.TailLines, 0, MaxTailLines); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("tailLines"), *q.TailLines, msgs[0]))
		}
	}
	if _, err := syntax.Parse(q.Pattern, syntax.Perl); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("pattern"), q.Pattern, err.Error()))
	}
	return errs
}

func validateServices(services []string) field.ErrorList {
	var errs field.ErrorList
	for _, s := range services {
		if err := safeServiceName(s); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("query"), s, err.Error()))
		}
	}
	if len(services) > MaxServices {
		errs = append(errs, field.TooMany(field.NewPath("query"), len(services), MaxServices))
	}
	return errs
}

func safeServiceName(s string) error {
	if len(s) > MaxServiceLength {
		return fmt.Errorf("length must be less than %d", MaxServiceLength)
	}
	if serviceNameUnsafe.MatchString(s) {
		return fmt.Errorf("input contains unsupported characters")
	}
	return nil
}
