// The `run` method (sections 6.2, 6.3): one unified-format operation, found by its spec name in one table,
// run on its entity with the arguments every operation shares (session, timeoutMS) applied first.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// call is one operation about to run.
type call struct {
	scope  *scope
	name   string
	object string
	target any // the entity named by object
	args   *arguments
	ctx    context.Context
	runner *operationRunner
	// budgetMS is the request's params.budgetMS (raw, nil when absent) for the request's own operation only;
	// iterateUntilDocumentOrError reads it (section 6.4.2), every other operation ignores it.
	budgetMS json.RawMessage
}

// outcome is what an operation produced: a value (kind "" or "documents") or a driver object (kind "entity"),
// and for withTransaction the nested operations it ran (section 6.5), kept even when it failed.
type outcome struct {
	value  any
	kind   string
	object any
	nested []json.RawMessage
}

func valueOf(value any) (outcome, error) { return outcome{value: value}, nil }

func documentsOf(docs []bson.Raw) (outcome, error) {
	list := bson.A{}
	for _, doc := range docs {
		list = append(list, doc)
	}
	return outcome{value: list, kind: "documents"}, nil
}

// nothing is the reply of an operation whose only outcome is success or its error.
func nothing(err error) (outcome, error) { return outcome{}, err }

func entityOf(object any) (outcome, error) { return outcome{kind: "entity", object: object}, nil }

type operation func(*call) (outcome, error)

// operations is the table of every operation the executor implements, by the unified format's name. `hello`
// lists its keys.
var operations = map[string]operation{}

func register(table map[string]operation) {
	for name, op := range table {
		operations[name] = op
	}
}

func operationNames() []string {
	names := make([]string, 0, len(operations))
	for name := range operations {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// operationRunner runs operations for one `run` request (and withTransaction's nested ones).
type operationRunner struct {
	scope     *scope
	requestID int64
	// budgetMS is the request's params.budgetMS, handed to the first operation run (the request's own) and
	// never to withTransaction's nested ones: it is a field beside `operation`, about that operation alone.
	budgetMS json.RawMessage
}

// run runs one operation document ({name, object, arguments, saveResultAsEntity}) and stores its result
// entity when it is a driver object or asked for. It returns the outcome and the id the entity is kept under.
func (r *operationRunner) run(ctx context.Context, value any) (outcome, string, error) {
	opArgs, err := newArguments("operation", value)
	if err != nil {
		return outcome{}, "", err
	}
	name, err := opArgs.requiredString("name")
	if err != nil {
		return outcome{}, "", err
	}
	object, err := opArgs.requiredString("object")
	if err != nil {
		return outcome{}, "", err
	}
	saveAs, _, err := opArgs.str("saveResultAsEntity")
	if err != nil {
		return outcome{}, "", err
	}
	rawArgs, _ := opArgs.lookup("arguments")
	op, known := operations[name]
	if !known {
		return outcome{}, "", notImplemented("operation %q is not implemented", name)
	}
	target, err := r.scope.get(object)
	if err != nil {
		return outcome{}, "", err
	}
	args, err := newArguments(fmt.Sprintf("operation %q", name), rawArgs)
	if err != nil {
		return outcome{}, "", err
	}
	ctx, cancel, err := r.sharedArguments(ctx, args)
	if err != nil {
		return outcome{}, "", err
	}
	defer cancel()
	budgetMS := r.budgetMS
	r.budgetMS = nil
	result, err := op(&call{
		scope: r.scope, name: name, object: object, target: target, args: args, ctx: ctx, runner: r, budgetMS: budgetMS,
	})
	if err != nil {
		return outcome{nested: result.nested}, "", err
	}
	return r.keep(result, saveAs)
}

// keep stores a driver object (always) or a saved value under its entity id.
func (r *operationRunner) keep(result outcome, saveAs string) (outcome, string, error) {
	if result.kind == "entity" {
		id := saveAs
		if id == "" {
			id = fmt.Sprintf("$result%d", r.requestID)
			for n := 2; r.scope.entities[id] != nil; n++ {
				id = fmt.Sprintf("$result%d_%d", r.requestID, n)
			}
		}
		if err := r.scope.put(id, result.object); err != nil {
			return outcome{}, "", err
		}
		return result, id, nil
	}
	if saveAs != "" {
		if err := r.scope.put(saveAs, result.value); err != nil {
			return outcome{}, "", err
		}
	}
	return result, "", nil
}

// sharedArguments applies what every operation may carry: `session` (the operation runs in it) and
// `timeoutMS` (the Go driver's operation timeout is the context's deadline).
func (r *operationRunner) sharedArguments(ctx context.Context, args *arguments) (context.Context, context.CancelFunc, error) {
	cancel := func() {}
	if id, ok, err := args.str("session"); err != nil {
		return nil, cancel, err
	} else if ok {
		session, err := r.scope.session(id)
		if err != nil {
			return nil, cancel, err
		}
		ctx = mongo.NewSessionContext(ctx, session.session)
	}
	if ms, ok, err := args.integer("timeoutMS"); err != nil {
		return nil, cancel, err
	} else if ok {
		if ms <= 0 {
			return nil, cancel, notImplemented("timeoutMS %d: the Go driver has no per-operation way to say 'no timeout'", ms)
		}
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	}
	return ctx, cancel, nil
}

// Typed access to the call's target.

func (c *call) wrongTarget() error {
	return notImplemented("operation %q on %s (%T) is not implemented", c.name, c.object, c.target)
}

func (c *call) collection() (*mongo.Collection, error) {
	if coll, ok := c.target.(*mongo.Collection); ok {
		return coll, nil
	}
	return nil, c.wrongTarget()
}

func (c *call) database() (*mongo.Database, error) {
	if db, ok := c.target.(*mongo.Database); ok {
		return db, nil
	}
	return nil, c.wrongTarget()
}

func (c *call) sessionEntity() (*sessionEntity, error) {
	if session, ok := c.target.(*sessionEntity); ok {
		return session, nil
	}
	return nil, c.wrongTarget()
}

func (c *call) changeStream() (*mongo.ChangeStream, error) {
	if stream, ok := c.target.(*mongo.ChangeStream); ok {
		return stream, nil
	}
	return nil, c.wrongTarget()
}

// optionReader hands optional arguments to a driver options builder's setters; the first bad value is kept.
type optionReader struct {
	args *arguments
	err  error
}

func (o *optionReader) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// done reports the first bad value, else refuses an argument nobody read.
func (o *optionReader) done() error {
	if o.err != nil {
		return o.err
	}
	return o.args.unused()
}

func dataOption[B any](o *optionReader, name string, set func(any) B) {
	if value, ok := o.args.data(name); ok {
		set(value)
	}
}

func boolOption[B any](o *optionReader, name string, set func(bool) B) {
	value, ok, err := o.args.boolean(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set(value)
	}
}

func stringOption[B any](o *optionReader, name string, set func(string) B) {
	value, ok, err := o.args.str(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set(value)
	}
}

func int32Option[B any](o *optionReader, name string, set func(int32) B) {
	value, ok, err := o.args.integer(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set(int32(value))
	}
}

func int64Option[B any](o *optionReader, name string, set func(int64) B) {
	value, ok, err := o.args.integer(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set(value)
	}
}

func msOption[B any](o *optionReader, name string, set func(time.Duration) B) {
	value, ok, err := o.args.milliseconds(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set(value)
	}
}

func arrayOption[B any](o *optionReader, name string, set func([]any) B) {
	value, ok, err := o.args.array(name)
	if err != nil {
		o.fail(err)
	} else if ok {
		set([]any(value))
	}
}

func collationOption[B any](o *optionReader, set func(*options.Collation) B) {
	doc, ok, err := o.args.document("collation")
	if err != nil {
		o.fail(err)
		return
	}
	if !ok {
		return
	}
	collation, err := collationOf(doc)
	if err != nil {
		o.fail(err)
		return
	}
	set(collation)
}

// collationOf maps a collation document onto the driver's struct, field by field (its BSON keys are not the
// server's camelCase names).
func collationOf(doc bson.D) (*options.Collation, error) {
	args, err := newArguments("collation", doc)
	if err != nil {
		return nil, err
	}
	c := &options.Collation{}
	o := &optionReader{args: args}
	stringOption(o, "locale", func(v string) any { c.Locale = v; return nil })
	boolOption(o, "caseLevel", func(v bool) any { c.CaseLevel = v; return nil })
	stringOption(o, "caseFirst", func(v string) any { c.CaseFirst = v; return nil })
	int64Option(o, "strength", func(v int64) any { c.Strength = int(v); return nil })
	boolOption(o, "numericOrdering", func(v bool) any { c.NumericOrdering = v; return nil })
	stringOption(o, "alternate", func(v string) any { c.Alternate = v; return nil })
	stringOption(o, "maxVariable", func(v string) any { c.MaxVariable = v; return nil })
	boolOption(o, "normalization", func(v bool) any { c.Normalization = v; return nil })
	boolOption(o, "backwards", func(v bool) any { c.Backwards = v; return nil })
	return c, o.done()
}
