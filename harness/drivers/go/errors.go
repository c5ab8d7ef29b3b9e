// Errors as section 7 of docs/executor-protocol.md words them: the executor's own (notImplemented,
// invalidRequest, noChange, internal) and the driver's (driverError, described from the Go driver's types).
package main

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// protoErr is a reply's error object; fields beyond kind and message are a driverError's.
type protoErr struct {
	kind    string
	message string
	driver  bson.D // the driverError fields after kind and message, in the document's order
}

func (e *protoErr) Error() string { return e.kind + ": " + e.message }

func protocolError(kind, message string) *protoErr {
	return &protoErr{kind: kind, message: message}
}

func notImplemented(format string, args ...any) *protoErr {
	return protocolError("notImplemented", fmt.Sprintf(format, args...))
}

func invalidRequest(format string, args ...any) *protoErr {
	return protocolError("invalidRequest", fmt.Sprintf(format, args...))
}

// encode writes the error object in canonical Extended JSON (section 2: error is a BSON-valued field).
func (e *protoErr) encode() []byte {
	doc := bson.D{{Key: "kind", Value: e.kind}, {Key: "message", Value: e.message}}
	doc = append(doc, e.driver...)
	text, err := encodeValue(doc)
	if err != nil {
		fallback := bson.D{{Key: "kind", Value: "internal"}, {Key: "message", Value: "cannot encode an error: " + err.Error()}}
		text, _ = encodeValue(fallback)
	}
	return text
}

// asProtoErr gives any error its reply form: the executor's own errors as they are, everything else as the
// driver's error.
func asProtoErr(err error) *protoErr {
	var own *protoErr
	if errors.As(err, &own) {
		return own
	}
	return describeDriverError(err)
}

// describeDriverError fills in section 7's driverError fields from the Go driver's error types.
func describeDriverError(err error) *protoErr {
	code, codeName, fromServer := serverCode(err)
	labels := errorLabels(err)
	doc := bson.D{
		{Key: "type", Value: fmt.Sprintf("%T", err)},
		{Key: "code", Value: nullableInt(code, fromServer)},
		{Key: "codeName", Value: nullableString(codeName, fromServer)},
		{Key: "errorLabels", Value: labels},
		{Key: "isClientError", Value: !fromServer},
		{Key: "isNetworkError", Value: mongo.IsNetworkError(err)},
		{Key: "isTimeoutError", Value: isTimeout(err)},
	}
	if response := serverResponse(err); response != nil {
		doc = append(doc, bson.E{Key: "errorResponse", Value: response})
	}
	return &protoErr{kind: "driverError", message: err.Error(), driver: doc}
}

func nullableInt(value int32, present bool) any {
	if !present {
		return nil
	}
	return value
}

func nullableString(value string, present bool) any {
	if !present || value == "" {
		return nil
	}
	return value
}

// serverCode says whether the server produced the error and with which code. A "not primary" reply that the
// driver labels as a network-class error is still the server's (section 7).
func serverCode(err error) (int32, string, bool) {
	var command mongo.CommandError
	if errors.As(err, &command) {
		if len(command.Raw) > 0 || command.Code != 0 {
			return command.Code, command.Name, true
		}
		return 0, "", false
	}
	var write mongo.WriteException
	if errors.As(err, &write) {
		if len(write.WriteErrors) > 0 {
			return int32(write.WriteErrors[0].Code), codeNameOf(write.WriteErrors[0].Raw), true
		}
		if write.WriteConcernError != nil {
			return int32(write.WriteConcernError.Code), write.WriteConcernError.Name, true
		}
		return 0, "", true
	}
	var bulk mongo.BulkWriteException
	if errors.As(err, &bulk) {
		if len(bulk.WriteErrors) > 0 {
			return int32(bulk.WriteErrors[0].Code), codeNameOf(bulk.WriteErrors[0].Raw), true
		}
		if bulk.WriteConcernError != nil {
			return int32(bulk.WriteConcernError.Code), bulk.WriteConcernError.Name, true
		}
		return 0, "", true
	}
	return 0, "", false
}

// codeNameOf reads a write error's codeName from its raw document, when the server sent one.
func codeNameOf(raw bson.Raw) string {
	if raw == nil {
		return ""
	}
	name, _ := raw.Lookup("codeName").StringValueOK()
	return name
}

// errorLabels collects every label the error carries, from the server or added by the driver.
func errorLabels(err error) bson.A {
	labels := bson.A{}
	var command mongo.CommandError
	var write mongo.WriteException
	var bulk mongo.BulkWriteException
	var raw []string
	switch {
	case errors.As(err, &command):
		raw = command.Labels
	case errors.As(err, &write):
		raw = write.Labels
	case errors.As(err, &bulk):
		raw = bulk.Labels
	}
	for _, label := range raw {
		labels = append(labels, label)
	}
	return labels
}

// isTimeout is section 7's isTimeoutError: the driver's own verdict, mongo.IsTimeout (CSOT deadlines, network
// timeouts, MaxTimeMSExpired, a server selection that ran out of time: its error wraps the context's deadline).
func isTimeout(err error) bool {
	return mongo.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// serverResponse is the server's whole reply for a server error, when the driver kept it.
func serverResponse(err error) bson.Raw {
	var command mongo.CommandError
	if errors.As(err, &command) && len(command.Raw) > 0 {
		return command.Raw
	}
	var write mongo.WriteException
	if errors.As(err, &write) && len(write.Raw) > 0 {
		return write.Raw
	}
	var bulk mongo.BulkWriteException
	if errors.As(err, &bulk) {
		return bulkResponse(bulk)
	}
	return nil
}

// bulkResponse is section 7's errorResponse for a bulk write error, which the driver keeps as parsed parts only:
// writeErrors as the server sent them, with the index into the caller's whole list (the driver's Index; a request
// split into batches has per-batch indexes on the wire), and writeConcernError when there is one.
func bulkResponse(bulk mongo.BulkWriteException) bson.Raw {
	written := bson.A{}
	for _, failed := range bulk.WriteErrors {
		written = append(written, writeErrorDocument(failed.WriteError))
	}
	doc := bson.D{{Key: "writeErrors", Value: written}}
	if bulk.WriteConcernError != nil && len(bulk.WriteConcernError.Raw) > 0 {
		doc = append(doc, bson.E{Key: "writeConcernError", Value: bulk.WriteConcernError.Raw})
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil
	}
	return raw
}

// writeErrorDocument is one write error as the server sent it, its index replaced by the driver's.
func writeErrorDocument(failed mongo.WriteError) bson.D {
	doc := bson.D{}
	elements, err := failed.Raw.Elements()
	if len(failed.Raw) == 0 || err != nil {
		doc = bson.D{{Key: "index", Value: nil}, {Key: "code", Value: int32(failed.Code)}, {Key: "errmsg", Value: failed.Message}}
		if len(failed.Details) > 0 {
			doc = append(doc, bson.E{Key: "errInfo", Value: failed.Details})
		}
	} else {
		for _, element := range elements {
			doc = append(doc, bson.E{Key: element.Key(), Value: element.Value()})
		}
	}
	for i := range doc {
		if doc[i].Key == "index" {
			doc[i].Value = int32(failed.Index)
		}
	}
	return doc
}
