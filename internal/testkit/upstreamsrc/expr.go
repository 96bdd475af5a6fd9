package upstreamsrc

import (
	"go/ast"
	"go/token"
	"strconv"
	"time"
)

// Node is a piece of upstream syntax together with the file it is in, so
// that the names it uses can be resolved. Its methods fail the test when
// the syntax is not of the expected shape: upstream has changed how it
// writes the table, and the test must be updated.
type Node struct {
	ast.Node
	s *Source
	f *file
}

func (n Node) fatalf(format string, args ...any) {
	n.s.t.Helper()
	n.s.t.Fatalf("upstream %s: "+format, append([]any{n.s.fset.Position(n.Pos())}, args...)...)
}

func (n Node) with(x ast.Node) Node { return Node{Node: x, s: n.s, f: n.f} }

// Sub returns x, a piece of n's syntax that a test found by walking it
// (ast.Inspect), as a Node whose names resolve in n's file.
func (n Node) Sub(x ast.Node) Node { return n.with(x) }

// AsString evaluates a string expression: a literal, a constant (of the
// same package or an imported one), a sum of those, or a one-argument call
// of a string, which covers conversions (Namespace("IPC")) and
// errors.New("reason").
func (n Node) AsString() string {
	n.s.t.Helper()
	switch x := n.Node.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			v, err := strconv.Unquote(x.Value)
			if err != nil {
				n.fatalf("unquote %s: %v", x.Value, err)
			}
			return v
		}
	case *ast.ParenExpr:
		return n.with(x.X).AsString()
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			return n.with(x.X).AsString() + n.with(x.Y).AsString()
		}
	case *ast.Ident, *ast.SelectorExpr:
		return n.resolve().AsString()
	case *ast.CallExpr:
		if len(x.Args) == 1 {
			return n.with(x.Args[0]).AsString()
		}
	}
	n.fatalf("%T is not a string expression this helper evaluates", n.Node)
	return ""
}

// AsInt evaluates an integer constant expression: a literal, a constant
// (of the same package or an imported one), a conversion (int32(1)), and
// the operators - (unary and binary), +, * and <<.
func (n Node) AsInt() int64 {
	n.s.t.Helper()
	switch x := n.Node.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT {
			v, err := strconv.ParseInt(x.Value, 0, 64)
			if err != nil {
				n.fatalf("parse %s: %v", x.Value, err)
			}
			return v
		}
	case *ast.ParenExpr:
		return n.with(x.X).AsInt()
	case *ast.UnaryExpr:
		if x.Op == token.SUB {
			return -n.with(x.X).AsInt()
		}
	case *ast.BinaryExpr:
		l, r := n.with(x.X).AsInt(), n.with(x.Y).AsInt()
		switch x.Op {
		case token.ADD:
			return l + r
		case token.SUB:
			return l - r
		case token.MUL:
			return l * r
		case token.SHL:
			return l << r
		}
	case *ast.Ident, *ast.SelectorExpr:
		return n.resolve().AsInt()
	case *ast.CallExpr:
		if len(x.Args) == 1 {
			return n.with(x.Args[0]).AsInt()
		}
	}
	n.fatalf("%T is not an integer expression this helper evaluates", n.Node)
	return 0
}

// AsDuration evaluates a duration expression the way upstream writes
// them: integers, time's units (time.Second), * and +, parentheses, and
// constants of the same package or an imported one ("5 * time.Minute",
// "time.Minute * 15", "2*time.Minute + 2*time.Second", retryDelay).
func (n Node) AsDuration() time.Duration {
	n.s.t.Helper()
	switch x := n.Node.(type) {
	case *ast.BasicLit:
		return time.Duration(n.AsInt())
	case *ast.ParenExpr:
		return n.with(x.X).AsDuration()
	case *ast.BinaryExpr:
		switch x.Op {
		case token.MUL:
			return n.with(x.X).AsDuration() * n.with(x.Y).AsDuration()
		case token.ADD:
			return n.with(x.X).AsDuration() + n.with(x.Y).AsDuration()
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" {
			units := map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
				"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}
			if u, ok := units[x.Sel.Name]; ok {
				return u
			}
			n.fatalf("time.%s is not a unit", x.Sel.Name)
		}
		return n.resolve().AsDuration()
	case *ast.Ident:
		return n.resolve().AsDuration()
	case *ast.CallExpr:
		if len(x.Args) == 1 { // a conversion: time.Duration(n)
			return n.with(x.Args[0]).AsDuration()
		}
	}
	n.fatalf("%T is not a duration expression this helper evaluates", n.Node)
	return 0
}

// AsFloat evaluates a number: an integer or floating-point literal,
// negated or not.
func (n Node) AsFloat() float64 {
	n.s.t.Helper()
	switch x := n.Node.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT || x.Kind == token.FLOAT {
			v, err := strconv.ParseFloat(x.Value, 64)
			if err != nil {
				n.fatalf("parse %s: %v", x.Value, err)
			}
			return v
		}
	case *ast.ParenExpr:
		return n.with(x.X).AsFloat()
	case *ast.UnaryExpr:
		if x.Op == token.SUB {
			return -n.with(x.X).AsFloat()
		}
	case *ast.Ident, *ast.SelectorExpr:
		return n.resolve().AsFloat()
	}
	n.fatalf("%T is not a number this helper evaluates", n.Node)
	return 0
}

// AsFloats evaluates a composite literal of numbers ([]float64{...}).
func (n Node) AsFloats() []float64 {
	n.s.t.Helper()
	var out []float64
	for _, e := range n.Elems() {
		out = append(out, e.AsFloat())
	}
	return out
}

// resolve returns the value of the constant or variable an identifier or
// a package-qualified name (pkg.Name) refers to.
func (n Node) resolve() Node {
	n.s.t.Helper()
	switch x := n.Node.(type) {
	case *ast.Ident:
		return n.s.Value(n.f.pkgPath, x.Name)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if p, ok := n.s.importPath(n.f, id.Name); ok {
				return n.s.Value(p, x.Sel.Name)
			}
			n.fatalf("no import named %s", id.Name)
		}
	}
	n.fatalf("%T is not a name", n.Node)
	return Node{}
}

// Elems returns the elements of a composite literal.
func (n Node) Elems() []Node {
	n.s.t.Helper()
	cl, ok := n.Node.(*ast.CompositeLit)
	if !ok {
		n.fatalf("%T is not a composite literal", n.Node)
	}
	out := make([]Node, 0, len(cl.Elts))
	for _, e := range cl.Elts {
		out = append(out, n.with(e))
	}
	return out
}

// AsStrings evaluates a composite literal of strings ([]string{...}).
func (n Node) AsStrings() []string {
	n.s.t.Helper()
	var out []string
	for _, e := range n.Elems() {
		out = append(out, e.AsString())
	}
	return out
}

// AsStringMap evaluates a composite literal of string keys and values
// (map[string]string{...}).
func (n Node) AsStringMap() map[string]string {
	n.s.t.Helper()
	out := map[string]string{}
	for _, e := range n.Elems() {
		kv, ok := e.Node.(*ast.KeyValueExpr)
		if !ok {
			e.fatalf("%T is not a key: value element", e.Node)
		}
		out[e.with(kv.Key).AsString()] = e.with(kv.Value).AsString()
	}
	return out
}

// Fields returns the keyed fields of a struct literal ({name: "x", ...}).
func (n Node) Fields() map[string]Node {
	n.s.t.Helper()
	out := map[string]Node{}
	for _, e := range n.Elems() {
		kv, ok := e.Node.(*ast.KeyValueExpr)
		if !ok {
			e.fatalf("%T is not a key: value element", e.Node)
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			e.fatalf("field key %T is not a name", kv.Key)
		}
		out[key.Name] = e.with(kv.Value)
	}
	return out
}

// CompositeLits returns the composite literals in n, outermost first, in
// source order.
func (n Node) CompositeLits() []Node {
	var out []Node
	ast.Inspect(n.Node, func(x ast.Node) bool {
		if cl, ok := x.(*ast.CompositeLit); ok {
			out = append(out, n.with(cl))
		}
		return true
	})
	return out
}

// StringLiterals returns the values of the string literals in n, in
// source order: the messages and keys upstream writes out.
func (n Node) StringLiterals() []string {
	var out []string
	ast.Inspect(n.Node, func(x ast.Node) bool {
		if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, v)
			}
		}
		return true
	})
	return out
}

// Calls returns the calls of pkg.fn in n (fmt.Sprintf, say) in source
// order; pkg is the name the file imports the package under.
func (n Node) Calls(pkg, fn string) []Node {
	return n.CallsTo(func(x, f string) bool { return x == pkg && f == fn })
}

// CallsTo returns the calls of x.f in n, x a name (a package or a
// variable: fs.StringVar), for which match is true, in source order.
func (n Node) CallsTo(match func(x, f string) bool) []Node {
	var out []Node
	ast.Inspect(n.Node, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && match(id.Name, sel.Sel.Name) {
				out = append(out, n.with(call))
			}
		}
		return true
	})
	return out
}

// Arg returns the i-th argument of a call.
func (n Node) Arg(i int) Node {
	n.s.t.Helper()
	call, ok := n.Node.(*ast.CallExpr)
	if !ok || i >= len(call.Args) {
		n.fatalf("%T is not a call with an argument %d", n.Node, i)
	}
	return n.with(call.Args[i])
}

// Entry is one key: value element of a map literal.
type Entry struct{ Key, Value Node }

// Entries returns the key: value elements of a map literal (map[K]V{...}),
// keys unevaluated.
func (n Node) Entries() []Entry {
	n.s.t.Helper()
	var out []Entry
	for _, e := range n.Elems() {
		kv, ok := e.Node.(*ast.KeyValueExpr)
		if !ok {
			e.fatalf("%T is not a key: value element", e.Node)
		}
		out = append(out, Entry{Key: e.with(kv.Key), Value: e.with(kv.Value)})
	}
	return out
}
