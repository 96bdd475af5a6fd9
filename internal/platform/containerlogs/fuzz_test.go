package containerlogs

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// formatLine writes e back as a CRI log line, always with its P/F tag and a
// trailing newline: the inverse of ParseLine.
func formatLine(e Entry) []byte {
	tag, content := "F", e.Content
	if e.Partial {
		tag = "P"
	} else {
		content = bytes.TrimSuffix(content, []byte("\n"))
	}
	var b bytes.Buffer
	b.WriteString(e.Time.Format(time.RFC3339Nano) + " " + string(e.Stream) + " " + tag + " ")
	b.Write(content)
	b.WriteByte('\n')
	return b.Bytes()
}

// FuzzParseLine: ParseLine never panics; the first headerBytes of a line
// parse as the line does (the tail reader decides from them alone); an
// entry it accepts has a known stream and a full entry ends with a newline;
// and formatting the entry and parsing it again gives the same entry (same
// instant, stream, tag and content), with the formatted line a fixed point.
func FuzzParseLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		checkHead(t, line)
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		if e.Stream != Stdout && e.Stream != Stderr {
			t.Fatalf("ParseLine(%q): stream %q", line, e.Stream)
		}
		if !e.Partial && !bytes.HasSuffix(e.Content, []byte("\n")) {
			t.Fatalf("ParseLine(%q): full entry content %q without a newline", line, e.Content)
		}
		formatted := formatLine(e)
		again, err := ParseLine(formatted)
		if err != nil {
			t.Fatalf("ParseLine(%q) = %+v, formatted as %q: %v", line, e, formatted, err)
		}
		if !again.Time.Equal(e.Time) {
			t.Fatalf("time of %q: %v, after the round trip %v", line, e.Time, again.Time)
		}
		again.Time = e.Time
		if diff := cmp.Diff(e, again); diff != "" {
			t.Fatalf("round trip of %q through %q (-first +again):\n%s", line, formatted, diff)
		}
		if twice := formatLine(again); !bytes.Equal(twice, formatted) {
			t.Fatalf("formatting is not a fixed point: %q then %q", formatted, twice)
		}
	})
}

// checkHead fails when the first headerBytes of line parse differently
// from line: another error state, entry header or content start.
func checkHead(t *testing.T, line []byte) {
	t.Helper()
	if len(line) <= headerBytes {
		return
	}
	e, content, err := parseHeader(line)
	he, hcontent, herr := parseHeader(line[:headerBytes])
	switch {
	case (err == nil) != (herr == nil):
		t.Fatalf("line %q: error %v, its head: %v", line, err, herr)
	case err == nil && (he.Stream != e.Stream || he.Partial != e.Partial || !he.Time.Equal(e.Time) || !bytes.HasPrefix(content, hcontent)):
		t.Fatalf("line %q: %+v content %q, its head: %+v content %q", line, e, content, he, hcontent)
	}
}

// FuzzParseQuery: query parsing never panics, and options that pass
// Validate satisfy what the reader relies on: tailLines >= 0, limitBytes
// > 0, sinceSeconds > 0, at most one since, a known stream, no tailLines
// with a single stream; and the reader Options made from them start no
// later than now and keep those bounds.
func FuzzParseQuery(f *testing.F) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery) // keeps what it could decode
		o, err := ParseQuery(q)
		if err != nil {
			return
		}
		if err := Validate(o); err != nil {
			return
		}
		checkValidOptions(t, rawQuery, o)
		checkReaderOptions(t, rawQuery, o, FromPodLogOptions(o, now), now)
	})
}

func checkValidOptions(t *testing.T, rawQuery string, o *corev1.PodLogOptions) {
	t.Helper()
	switch {
	case o.TailLines != nil && *o.TailLines < 0:
		t.Fatalf("%q: valid with tailLines %d", rawQuery, *o.TailLines)
	case o.LimitBytes != nil && *o.LimitBytes <= 0:
		t.Fatalf("%q: valid with limitBytes %d", rawQuery, *o.LimitBytes)
	case o.SinceSeconds != nil && *o.SinceSeconds <= 0:
		t.Fatalf("%q: valid with sinceSeconds %d", rawQuery, *o.SinceSeconds)
	case o.SinceSeconds != nil && o.SinceTime != nil:
		t.Fatalf("%q: valid with both sinceSeconds and sinceTime", rawQuery)
	case o.Stream == nil:
		t.Fatalf("%q: no stream after parsing", rawQuery)
	}
	switch *o.Stream {
	case corev1.LogStreamAll:
	case corev1.LogStreamStdout, corev1.LogStreamStderr:
		if o.TailLines != nil {
			t.Fatalf("%q: valid with stream %q and tailLines", rawQuery, *o.Stream)
		}
	default:
		t.Fatalf("%q: valid with stream %q", rawQuery, *o.Stream)
	}
}

func checkReaderOptions(t *testing.T, rawQuery string, o *corev1.PodLogOptions, r Options, now time.Time) {
	t.Helper()
	switch {
	case r.TailLines < -1 || (r.TailLines == -1) != (o.TailLines == nil):
		t.Fatalf("%q: reader tailLines %d from %v", rawQuery, r.TailLines, o.TailLines)
	case r.LimitBytes < 0 || (r.LimitBytes == 0) != (o.LimitBytes == nil):
		t.Fatalf("%q: reader limitBytes %d from %v", rawQuery, r.LimitBytes, o.LimitBytes)
	case o.SinceSeconds != nil && r.Since.After(now):
		t.Fatalf("%q: sinceSeconds %d starts at %v, after now %v", rawQuery, *o.SinceSeconds, r.Since, now)
	case o.SinceTime != nil && !r.Since.Equal(o.SinceTime.Time):
		t.Fatalf("%q: since %v, want sinceTime %v", rawQuery, r.Since, o.SinceTime.Time)
	case o.SinceSeconds == nil && o.SinceTime == nil && !r.Since.IsZero():
		t.Fatalf("%q: since %v without sinceSeconds or sinceTime", rawQuery, r.Since)
	case r.Stream != "" && r.Stream != Stdout && r.Stream != Stderr:
		t.Fatalf("%q: reader stream %q", rawQuery, r.Stream)
	case r.Follow != o.Follow || r.Timestamps != o.Timestamps:
		t.Fatalf("%q: follow/timestamps %v/%v from %v/%v", rawQuery, r.Follow, r.Timestamps, o.Follow, o.Timestamps)
	}
}
