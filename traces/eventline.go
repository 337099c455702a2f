package traces

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/model"
)

// EventLine is an event line (model.Event.Line) read back into its fields.
type EventLine struct {
	Actor  string
	Op     string
	Kind   string // "" when the line has none
	Key    string // namespace/name, name, or "" when the line has none
	Detail string
	// Result is "ok", "rv" (Rev holds the revision), "err" (Err holds the
	// error) or "list" (Versions holds what the List returned).
	Result   string
	Rev      model.Revision
	Err      string
	Versions []model.Version
	// Change is "", "added", "modified" or "deleted".
	Change string
	// Server is the apiserver that served the call (0 for none).
	Server int
	// CacheRev is the revision of the watch cache that served a read;
	// HasCacheRev says whether the line gives it.
	CacheRev    model.Revision
	HasCacheRev bool
	// Stale marks a read served from a cache behind the store.
	Stale bool
	// Time is the logical time as rendered, e.g. "30.5s".
	Time string
	// Step is the #N suffix.
	Step int
}

// lineScanner reads an event line left to right.
type lineScanner struct {
	s   string
	pos int
}

func (p *lineScanner) errf(format string, args ...any) error {
	return fmt.Errorf("event line column %d: %s", p.pos+1, fmt.Sprintf(format, args...))
}

func (p *lineScanner) rest() string { return p.s[p.pos:] }

// lit consumes the literal x.
func (p *lineScanner) lit(x string) bool {
	if strings.HasPrefix(p.rest(), x) {
		p.pos += len(x)
		return true
	}
	return false
}

// quoted consumes a Go-quoted string.
func (p *lineScanner) quoted() (string, error) {
	q, err := strconv.QuotedPrefix(p.rest())
	if err != nil || q[0] != '"' {
		return "", p.errf("want a Go-quoted string, got %s", got(p.rest()))
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", p.errf("want a Go-quoted string, got %s", got(p.rest()))
	}
	p.pos += len(q)
	return v, nil
}

// token consumes a bare token (up to a space or one of stop) or a quoted
// one. bare reports which it was.
func (p *lineScanner) token(stop string) (tok string, bare bool, err error) {
	if strings.HasPrefix(p.rest(), `"`) {
		tok, err = p.quoted()
		return tok, false, err
	}
	end := strings.IndexFunc(p.rest(), func(r rune) bool { return r == ' ' || strings.ContainsRune(stop, r) })
	if end < 0 {
		end = len(p.rest())
	}
	if end == 0 {
		return "", true, p.errf("want a token, got %s", got(p.rest()))
	}
	tok = p.rest()[:end]
	p.pos += end
	return tok, true, nil
}

// number consumes a non-negative decimal integer.
func (p *lineScanner) number() (int64, error) {
	end := 0
	for end < len(p.rest()) && p.rest()[end] >= '0' && p.rest()[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, p.errf("want a number, got %s", got(p.rest()))
	}
	n, err := strconv.ParseInt(p.rest()[:end], 10, 64)
	if err != nil {
		return 0, p.errf("number %s: %v", p.rest()[:end], err)
	}
	p.pos += end
	return n, nil
}

var errNoArrow = errors.New(`want " -> " between the call and its result`)

// ParseEventLine reads a line rendered by model.Event.Line back into its
// fields. It is strict: tokens are separated by exactly one space, as Line
// writes them.
func ParseEventLine(s string) (EventLine, error) {
	var e EventLine
	p := &lineScanner{s: s}
	var err error
	if e.Actor, _, err = p.token(""); err != nil {
		return e, fmt.Errorf("actor: %w", err)
	}
	if !p.lit(" ") {
		return e, p.errf("want a space and an operation after the actor")
	}
	if e.Op, _, err = p.token(""); err != nil {
		return e, fmt.Errorf("op: %w", err)
	}
	// [KIND [KEY]] [detail="..."] ->
	var pos []string
	detail := false
	for {
		if !p.lit(" ") {
			return e, p.errf("%v, got %s", errNoArrow, got(p.rest()))
		}
		if p.lit("->") {
			break
		}
		if detail {
			return e, p.errf("%v, got %s", errNoArrow, got(p.rest()))
		}
		if p.lit("detail=") {
			if e.Detail, err = p.quoted(); err != nil {
				return e, fmt.Errorf("detail: %w", err)
			}
			if e.Detail == "" {
				return e, p.errf("empty detail= (Line omits an empty detail)")
			}
			detail = true
			continue
		}
		if len(pos) == 2 {
			return e, p.errf("want detail=\"...\" or \"->\" after the kind and key, got %s", got(p.rest()))
		}
		tok, bare, err := p.token("")
		if err != nil {
			return e, err
		}
		if len(pos) == 0 && bare && tok == "-" {
			tok = "" // the placeholder of a key without a kind
		} else if tok == "" {
			return e, p.errf("empty kind or key (Line omits them)")
		}
		pos = append(pos, tok)
	}
	switch len(pos) {
	case 1:
		if pos[0] == "" {
			return e, p.errf(`the placeholder kind "-" must be followed by a key`)
		}
		e.Kind = pos[0]
	case 2:
		e.Kind, e.Key = pos[0], pos[1]
	}
	if !p.lit(" ") {
		return e, p.errf("want a result after \"->\"")
	}
	switch {
	case p.lit("ok"):
		e.Result = "ok"
	case p.lit("rv="):
		e.Result = "rv"
		n, err := p.number()
		if err != nil {
			return e, err
		}
		e.Rev = model.Revision(n)
	case p.lit("err="):
		e.Result = "err"
		if e.Err, err = p.quoted(); err != nil {
			return e, err
		}
		if e.Err == "" {
			return e, p.errf(`empty err="" (Line writes no error as a result)`)
		}
	case p.lit("["):
		e.Result = "list"
		e.Versions = []model.Version{}
		for !p.lit("]") {
			if len(e.Versions) > 0 && !p.lit(" ") {
				return e, p.errf("want a space or \"]\" between listed objects, got %s", got(p.rest()))
			}
			name, _, err := p.token("@[]")
			if err != nil {
				return e, err
			}
			if !p.lit("@") {
				return e, p.errf("want NAME@REV in a list result, got %s", got(p.rest()))
			}
			n, err := p.number()
			if err != nil {
				return e, err
			}
			e.Versions = append(e.Versions, model.Version{Name: name, Rev: model.Revision(n)})
		}
	default:
		return e, p.errf("want ok, rv=N, err=\"...\" or [...] after \"->\", got %s", got(p.rest()))
	}
	for _, c := range []string{" added", " modified", " deleted"} {
		if p.lit(c) {
			e.Change = c[1:]
			break
		}
	}
	if p.lit(" (apiserver-") {
		n, err := p.number()
		if err != nil {
			return e, err
		}
		if n < 1 || n > 1<<30 {
			return e, p.errf("apiserver number %d out of range", n)
		}
		e.Server = int(n)
		if p.lit(", cache at rev ") {
			n, err := p.number()
			if err != nil {
				return e, err
			}
			e.CacheRev, e.HasCacheRev = model.Revision(n), true
			e.Stale = p.lit(", stale")
		}
		if !p.lit(")") {
			return e, p.errf("want \")\" closing the apiserver, got %s", got(p.rest()))
		}
	}
	if !p.lit(" t=") {
		return e, p.errf("want \" t=TIME\", got %s", got(p.rest()))
	}
	start := p.pos
	if _, err := p.number(); err != nil {
		return e, err
	}
	if p.lit(".") {
		if _, err := p.number(); err != nil {
			return e, err
		}
	}
	if !p.lit("s") {
		return e, p.errf("want a time like 30.5s, got %s", got(p.s[start:]))
	}
	e.Time = p.s[start:p.pos]
	if !p.lit(" #") {
		return e, p.errf("want \" #STEP\" at the end, got %s", got(p.rest()))
	}
	n, err := p.number()
	if err != nil {
		return e, err
	}
	if n > 1<<40 {
		return e, p.errf("step %d out of range", n)
	}
	e.Step = int(n)
	if p.rest() != "" {
		return e, p.errf("want the end of the line after the step, got %s", got(p.rest()))
	}
	// One codec: model.Event.Line is the only writer of event lines, and a
	// line is read only if writing what was read gives the line back. A
	// line the writer could not have produced (an "ok" result of a Get, a
	// cache revision on a write), or a writer changed without this parser,
	// is an error here instead of a silent misreading in the viewer.
	if back := e.Event().Line(); back != s {
		col := 0
		for col < len(s) && col < len(back) && s[col] == back[col] {
			col++
		}
		return e, fmt.Errorf("event line column %d: model.Event.Line would write %s here; the line was not written by this version of opcheck, or was edited", col+1, got(back[min(col, len(back)):]))
	}
	return e, nil
}

// Event returns the model.Event the line was written from, as far as a line
// tells it: Namespace is empty and Name holds the whole key, and the
// history-only fields (HeadRev, Object) are zero.
func (el *EventLine) Event() *model.Event {
	e := &model.Event{
		Step: el.Step, Actor: model.Actor(el.Actor), Op: model.Op(el.Op),
		Kind: el.Kind, Name: el.Key, Server: el.Server, ReadRev: el.CacheRev,
		Rev: el.Rev, Stale: el.Stale, Versions: el.Versions, Err: el.Err,
		Detail: el.Detail, Time: lineTime(el.Time),
	}
	switch el.Change {
	case "added":
		e.Change = model.ChangeAdded
	case "modified":
		e.Change = model.ChangeModified
	case "deleted":
		e.Change = model.ChangeDeleted
	}
	return e
}

// lineTime reads a time as model.Time.String writes it ("30.5s"); the
// scanner has checked its shape.
func lineTime(s string) model.Time {
	secs, frac, _ := strings.Cut(strings.TrimSuffix(s, "s"), ".")
	t, _ := strconv.ParseInt(secs, 10, 64)
	t *= 1000
	if frac != "" {
		ms, _ := strconv.ParseInt((frac + "00")[:3], 10, 64)
		t += ms
	}
	return model.Time(t)
}
