package credprovider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestMatchImage(t *testing.T) {
	tests := []struct {
		glob, image string
		want        bool
		wantErr     bool
	}{
		{glob: "registry.example.com", image: "registry.example.com/team/app", want: true},
		{glob: "registry.example.com", image: "other.example.com/app"},
		{glob: "*.example.com", image: "registry.example.com/app", want: true},
		{glob: "*.example.com", image: "example.com/app"},
		{glob: "*.example.com", image: "a.b.example.com/app"},
		{glob: "*.*.example.com", image: "a.b.example.com/app", want: true},
		{glob: "registry.*.com", image: "registry.example.com/app", want: true},
		{glob: "*-ecr.example.com", image: "eu-ecr.example.com/app", want: true},
		{glob: "registry.example.com/team", image: "registry.example.com/team/app", want: true},
		{glob: "registry.example.com/team", image: "registry.example.com/other/app"},
		{glob: "registry.example.com/team", image: "registry.example.com/teamster/app", want: true}, // a string prefix, as upstream
		{glob: "127.0.0.1:5000", image: "127.0.0.1:5000/private/app", want: true},
		{glob: "127.0.0.1:5000", image: "127.0.0.1:6000/private/app"},
		{glob: "127.0.0.1", image: "127.0.0.1:5000/private/app"},
		{glob: "127.0.0.1:5000", image: "127.0.0.1/private/app"},
		{glob: "*.dkr.ecr.*.amazonaws.com", image: "123.dkr.ecr.eu-west-1.amazonaws.com/app", want: true},
		{glob: "*.dkr.ecr.*.amazonaws.com", image: "123.dkr.ecr.eu-west-1.amazonaws.com.cn/app"},
		{glob: "[a.example.com", image: "a.example.com/app", wantErr: true},
		{glob: "registry.example.com", image: "%zz/app", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.glob+" "+tt.image, func(t *testing.T) {
			got, err := MatchImage(tt.glob, tt.image)
			if (err != nil) != tt.wantErr {
				t.Fatalf("MatchImage(%q, %q) error = %v, want error %v", tt.glob, tt.image, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("MatchImage(%q, %q) = %v, want %v", tt.glob, tt.image, got, tt.want)
			}
		})
	}
}

// TestMatchImageUpstreamExamples runs the examples of upstream's
// TestURLsMatch (pkg/credentialprovider/keyring_test.go), read from the
// upstream source, so that MatchImage answers them as URLsMatchStr does.
func TestMatchImageUpstreamExamples(t *testing.T) {
	dir := upstreamsrc.New(t).ModuleDir("k8s.io/kubernetes")
	examples := urlsMatchExamples(t, filepath.Join(dir, "pkg", "credentialprovider", "keyring_test.go"))
	if len(examples) < 10 {
		t.Fatalf("found %d examples in upstream's TestURLsMatch, want at least 10: did it change shape?", len(examples))
	}
	for _, ex := range examples {
		if got, _ := MatchImage(ex.glob, ex.image); got != ex.want {
			t.Errorf("MatchImage(%q, %q) = %v, upstream says %v", ex.glob, ex.image, got, ex.want)
		}
	}
}

type matchExample struct {
	glob, image string
	want        bool
}

// urlsMatchExamples reads the {globURL, targetURL, matchExpected} literals
// of upstream's TestURLsMatch.
func urlsMatchExamples(t *testing.T, path string) []matchExample {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse upstream %s: %v", path, err)
	}
	var out []matchExample
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "TestURLsMatch" {
			continue
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			fields := map[string]string{}
			for _, e := range cl.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok {
						fields[k.Name] = literal(kv.Value)
					}
				}
			}
			if g, ok := fields["globURL"]; ok {
				out = append(out, matchExample{glob: g, image: fields["targetURL"], want: fields["matchExpected"] == "true"})
			}
			return true
		})
	}
	return out
}

// literal is a string literal's value or an identifier's name (true).
func literal(x ast.Expr) string {
	switch v := x.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(v.Value)
		if err != nil {
			return v.Value
		}
		return s
	case *ast.Ident:
		return v.Name
	}
	return ""
}
