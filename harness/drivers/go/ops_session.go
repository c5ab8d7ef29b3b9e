// Session operations, withTransaction with its nested operations (section 6.5), and the session state the
// capability calls report (section 6.6).
package main

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"strconv"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/session"
)

func init() {
	register(map[string]operation{
		"startTransaction":  startTransaction,
		"commitTransaction": commitTransaction,
		"abortTransaction":  abortTransaction,
		"endSession":        endSessionOp,
		"withTransaction":   withTransaction,
	})
}

func startTransaction(c *call) (outcome, error) {
	s, err := c.sessionEntity()
	if err != nil {
		return outcome{}, err
	}
	opts, err := transactionOptions(c.args)
	if err != nil {
		return outcome{}, err
	}
	return nothing(s.session.StartTransaction(opts))
}

func commitTransaction(c *call) (outcome, error) {
	s, err := c.sessionEntity()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	return nothing(s.session.CommitTransaction(c.ctx))
}

func abortTransaction(c *call) (outcome, error) {
	s, err := c.sessionEntity()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	return nothing(s.session.AbortTransaction(c.ctx))
}

func endSessionOp(c *call) (outcome, error) {
	s, err := c.sessionEntity()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	s.session.EndSession(c.ctx)
	s.ended = true
	return valueOf(nil)
}

// withTransaction runs the callback's operations inside the driver's own retry loop: a nested failure is
// returned to the driver unchanged, so its labels decide a retry as they would for an application.
func withTransaction(c *call) (outcome, error) {
	s, err := c.sessionEntity()
	if err != nil {
		return outcome{}, err
	}
	callback, _, err := c.args.array("callback")
	if err != nil {
		return outcome{}, err
	}
	opts, err := transactionOptions(c.args)
	if err != nil {
		return outcome{}, err
	}
	attempt := 0
	var nested []json.RawMessage
	_, err = s.session.WithTransaction(c.ctx, func(ctx context.Context) (any, error) {
		attempt++
		for index, op := range callback {
			result, entity, opErr := c.runner.run(ctx, op)
			nested = append(nested, nestedEntry(attempt, index, result, entity, opErr))
			if opErr != nil {
				return nil, opErr
			}
		}
		return nil, nil
	}, opts)
	if nested == nil {
		nested = []json.RawMessage{}
	}
	return outcome{nested: nested}, err
}

// nestedEntry is one line of a withTransaction reply's `nested` (canonical Extended JSON, as `nested` is a
// BSON-valued field).
func nestedEntry(attempt, index int, result outcome, entity string, err error) json.RawMessage {
	doc := bson.D{{Key: "attempt", Value: int32(attempt)}, {Key: "index", Value: int32(index)}}
	var text json.RawMessage
	if err != nil {
		errorText := asProtoErr(err).encode()
		text, _ = encodeValue(append(doc, bson.E{Key: "ok", Value: false}))
		return spliceField(text, "error", errorText)
	}
	doc = append(doc, bson.E{Key: "ok", Value: true})
	if result.kind == "entity" {
		doc = append(doc, bson.E{Key: "result", Value: nil}, bson.E{Key: "resultKind", Value: "entity"}, bson.E{Key: "entity", Value: entity})
	} else {
		doc = append(doc, bson.E{Key: "result", Value: result.value})
		if result.kind != "" {
			doc = append(doc, bson.E{Key: "resultKind", Value: result.kind})
		}
	}
	text, encodeErr := encodeValue(doc)
	if encodeErr != nil {
		text, _ = encodeValue(bson.D{{Key: "attempt", Value: int32(attempt)}, {Key: "index", Value: int32(index)}, {Key: "ok", Value: false}})
		return spliceField(text, "error", protocolError("internal", "cannot encode a nested result: "+encodeErr.Error()).encode())
	}
	return text
}

// spliceField adds an already-encoded field at the end of an encoded object.
func spliceField(object json.RawMessage, name string, value []byte) json.RawMessage {
	out := append([]byte(nil), object[:len(object)-1]...)
	out = append(out, ',')
	out = append(out, mustJSON(name)...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}

// clientSessionOf reaches the driver's session state. mongo.Session keeps it in an unexported field and has no
// accessor for the transaction state, pinning or dirtiness; the Go driver's own unified test runner reads the
// same field the same way (reflection), so the executor reports exactly what the driver holds.
func clientSessionOf(s *mongo.Session) (*session.Client, error) {
	field := reflect.ValueOf(s).Elem().FieldByName("clientSession")
	if !field.IsValid() {
		return nil, protocolError("internal", "this driver release keeps no clientSession field in mongo.Session")
	}
	value := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface()
	client, ok := value.(*session.Client)
	if !ok || client == nil {
		return nil, protocolError("internal", "mongo.Session's clientSession is not a *session.Client")
	}
	return client, nil
}

var transactionStates = map[session.TransactionState]string{
	session.None:       "none",
	session.Starting:   "starting",
	session.InProgress: "in_progress",
	session.Committed:  "committed",
	session.Aborted:    "aborted",
}

func sessionState(s *sessionEntity) (bson.D, error) {
	client, err := clientSessionOf(s.session)
	if err != nil {
		return nil, err
	}
	dirty := client.Server != nil && client.Server.Dirty
	return bson.D{
		{Key: "transactionState", Value: transactionStates[client.TransactionState]},
		{Key: "pinned", Value: client.PinnedServerAddr != nil || client.PinnedConnection != nil},
		{Key: "dirty", Value: dirty},
	}, nil
}

func sessionPinnedAddress(s *sessionEntity) (any, error) {
	client, err := clientSessionOf(s.session)
	if err != nil {
		return nil, err
	}
	if client.PinnedServerAddr == nil {
		return nil, nil
	}
	host, portText, err := net.SplitHostPort(client.PinnedServerAddr.String())
	if err != nil {
		return nil, protocolError("internal", "pinned address: "+err.Error())
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, protocolError("internal", "pinned address: "+err.Error())
	}
	return bson.D{{Key: "host", Value: host}, {Key: "port", Value: int32(port)}}, nil
}
