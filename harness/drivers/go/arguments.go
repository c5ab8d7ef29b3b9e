// Reading a unified-format operation's arguments (section 6.2): data keeps its BSON types, options' numbers
// become Go numbers (section 2.1), and an argument nobody read is refused with notImplemented, never ignored.
package main

import (
	"math"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// arguments is one operation's (or entity's) argument document with a note of what was read.
type arguments struct {
	owner string // "operation 'find'", "client entity": named in refusals
	doc   bson.D
	used  map[string]bool
}

func newArguments(owner string, value any) (*arguments, error) {
	args := &arguments{owner: owner, used: map[string]bool{}}
	switch doc := value.(type) {
	case nil:
	case bson.D:
		args.doc = doc
	default:
		return nil, invalidRequest("%s: arguments must be a document, got %T", owner, value)
	}
	return args, nil
}

func (a *arguments) lookup(name string) (any, bool) {
	for _, element := range a.doc {
		if element.Key == name {
			a.used[name] = true
			return element.Value, true
		}
	}
	return nil, false
}

// has says whether the argument is present, without counting it as read.
func (a *arguments) has(name string) bool {
	for _, element := range a.doc {
		if element.Key == name {
			return true
		}
	}
	return false
}

// unused refuses the first argument no code read: the executor cannot hand it to the driver (section 6.2).
func (a *arguments) unused() error {
	var left []string
	for _, element := range a.doc {
		if !a.used[element.Key] {
			left = append(left, element.Key)
		}
	}
	if len(left) == 0 {
		return nil
	}
	sort.Strings(left)
	return notImplemented("%s: argument %q is not implemented", a.owner, left[0])
}

// data is a data argument, passed on with its BSON types (section 2.1).
func (a *arguments) data(name string) (any, bool) {
	return a.lookup(name)
}

// requiredData is data the operation cannot run without.
func (a *arguments) requiredData(name string) (any, error) {
	value, ok := a.lookup(name)
	if !ok {
		return nil, invalidRequest("%s: argument %q is required", a.owner, name)
	}
	return value, nil
}

func (a *arguments) document(name string) (bson.D, bool, error) {
	value, ok := a.lookup(name)
	if !ok || value == nil {
		return nil, false, nil
	}
	doc, isDoc := value.(bson.D)
	if !isDoc {
		return nil, true, invalidRequest("%s: argument %q must be a document, got %T", a.owner, name, value)
	}
	return doc, true, nil
}

func (a *arguments) array(name string) (bson.A, bool, error) {
	value, ok := a.lookup(name)
	if !ok || value == nil {
		return nil, false, nil
	}
	list, isList := value.(bson.A)
	if !isList {
		return nil, true, invalidRequest("%s: argument %q must be an array, got %T", a.owner, name, value)
	}
	return list, true, nil
}

func (a *arguments) str(name string) (string, bool, error) {
	value, ok := a.lookup(name)
	if !ok {
		return "", false, nil
	}
	text, isText := value.(string)
	if !isText {
		return "", true, invalidRequest("%s: argument %q must be a string, got %T", a.owner, name, value)
	}
	return text, true, nil
}

func (a *arguments) requiredString(name string) (string, error) {
	text, ok, err := a.str(name)
	if err == nil && !ok {
		err = invalidRequest("%s: argument %q is required", a.owner, name)
	}
	return text, err
}

func (a *arguments) boolean(name string) (bool, bool, error) {
	value, ok := a.lookup(name)
	if !ok {
		return false, false, nil
	}
	flag, isBool := value.(bool)
	if !isBool {
		return false, true, invalidRequest("%s: argument %q must be a boolean, got %T", a.owner, name, value)
	}
	return flag, true, nil
}

// integer is an option's number as a Go integer (section 2.1: an option's Int32, Int64 or integral Double).
func (a *arguments) integer(name string) (int64, bool, error) {
	value, ok := a.lookup(name)
	if !ok {
		return 0, false, nil
	}
	n, isNumber := optionNumber(value)
	if !isNumber {
		return 0, true, invalidRequest("%s: argument %q must be an integer, got %v", a.owner, name, value)
	}
	return n, true, nil
}

// milliseconds is an option in ms (maxTimeMS, maxAwaitTimeMS) as a duration.
func (a *arguments) milliseconds(name string) (time.Duration, bool, error) {
	n, ok, err := a.integer(name)
	return time.Duration(n) * time.Millisecond, ok, err
}

func optionNumber(value any) (int64, bool) {
	switch n := value.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return int64(n), true
		}
	}
	return 0, false
}

// stringList reads an array of strings (observeEvents, ignoreCommandMonitoringEvents).
func (a *arguments) stringList(name string) ([]string, error) {
	list, _, err := a.array(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		text, ok := item.(string)
		if !ok {
			return nil, invalidRequest("%s: %q must hold strings, got %T", a.owner, name, item)
		}
		out = append(out, text)
	}
	return out, nil
}

// readConcernOf turns a unified-format readConcern document into the driver's type.
func readConcernOf(owner string, value any) (*readconcern.ReadConcern, error) {
	args, err := newArguments(owner+" readConcern", value)
	if err != nil {
		return nil, err
	}
	level, _, err := args.str("level")
	if err != nil {
		return nil, err
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	return &readconcern.ReadConcern{Level: level}, nil
}

// writeConcernOf turns a unified-format writeConcern document into the driver's type. The Go driver v2 has
// no wtimeout, so a wtimeoutMS is refused rather than dropped.
func writeConcernOf(owner string, value any) (*writeconcern.WriteConcern, error) {
	args, err := newArguments(owner+" writeConcern", value)
	if err != nil {
		return nil, err
	}
	concern := &writeconcern.WriteConcern{}
	if w, ok := args.lookup("w"); ok {
		if n, isNumber := optionNumber(w); isNumber {
			concern.W = int(n)
		} else if text, isText := w.(string); isText {
			concern.W = text
		} else {
			return nil, invalidRequest("%s: writeConcern.w must be a number or a string, got %T", owner, w)
		}
	}
	if journal, ok, err := args.boolean("journal"); err != nil {
		return nil, err
	} else if ok {
		concern.Journal = &journal
	}
	if journal, ok, err := args.boolean("j"); err != nil {
		return nil, err
	} else if ok {
		concern.Journal = &journal
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	return concern, nil
}

// readPreferenceOf turns a unified-format readPreference document into the driver's type.
func readPreferenceOf(owner string, value any) (*readpref.ReadPref, error) {
	args, err := newArguments(owner+" readPreference", value)
	if err != nil {
		return nil, err
	}
	modeName, err := args.requiredString("mode")
	if err != nil {
		return nil, err
	}
	mode, err := readpref.ModeFromString(modeName)
	if err != nil {
		return nil, err
	}
	var options []readpref.Option
	if seconds, ok, err := args.integer("maxStalenessSeconds"); err != nil {
		return nil, err
	} else if ok {
		options = append(options, readpref.WithMaxStaleness(time.Duration(seconds)*time.Second))
	}
	if args.has("tagSets") || args.has("hedge") {
		return nil, notImplemented("%s readPreference: tagSets and hedge are not implemented", owner)
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	return readpref.New(mode, options...)
}
