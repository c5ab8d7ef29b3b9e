// The wire side of docs/executor-protocol.md: JSON lines in, JSON lines out.
//
// The envelope and every parameter outside params.entity/operation/value are plain JSON (section 2);
// BSON-valued fields are decoded and encoded with the driver's own Extended JSON (canonical), so an Int64
// stays an Int64, a Timestamp a Timestamp, and key order is kept.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// request is one line from the harness once its id is known to be an integer.
type request struct {
	id     int64
	method string
	params map[string]json.RawMessage
}

// errNotARequest marks a line that has no integer id: the protocol forbids any reply to it (section 1).
type errNotARequest struct{ why string }

func (e errNotARequest) Error() string { return e.why }

// parseRequest splits a line into its envelope. A line without an integer id is errNotARequest; a request
// whose other fields are malformed still has its id, and the second error says what is wrong with it.
func parseRequest(line []byte) (*request, error, error) {
	var envelope map[string]json.RawMessage
	if err := json.Unmarshal(line, &envelope); err != nil {
		return nil, errNotARequest{"not a JSON object: " + err.Error()}, nil
	}
	rawID, ok := envelope["id"]
	if !ok {
		return nil, errNotARequest{"no id"}, nil
	}
	id, ok := plainInt(rawID)
	if !ok {
		return nil, errNotARequest{"id is not an integer: " + string(rawID)}, nil
	}
	req := &request{id: id, params: map[string]json.RawMessage{}}
	if rawMethod, ok := envelope["method"]; !ok || json.Unmarshal(rawMethod, &req.method) != nil {
		return req, nil, protocolError("invalidRequest", "the request has no string method")
	}
	if rawParams, ok := envelope["params"]; ok && string(rawParams) != "null" {
		if err := json.Unmarshal(rawParams, &req.params); err != nil {
			return req, nil, protocolError("invalidRequest", "params is not a JSON object")
		}
	}
	return req, nil, nil
}

// plainInt reads an integer written either plainly (7) or canonically ({"$numberInt": "7"}), as section 2
// asks readers to accept both.
func plainInt(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	var number json.Number
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var any_ any
	if err := decoder.Decode(&any_); err != nil {
		return 0, false
	}
	switch value := any_.(type) {
	case json.Number:
		number = value
	case map[string]any:
		if len(value) != 1 {
			return 0, false
		}
		for key, inner := range value {
			text, isText := inner.(string)
			if !isText || (key != "$numberInt" && key != "$numberLong") {
				return 0, false
			}
			number = json.Number(text)
		}
	default:
		return 0, false
	}
	if n, err := strconv.ParseInt(string(number), 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(string(number), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), true
	}
	return 0, false
}

// plainString reads a plain JSON string parameter; absent or null is "".
func (r *request) plainString(name string) (string, error) {
	raw, ok := r.params[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", protocolError("invalidRequest", fmt.Sprintf("params.%s is not a string: %s", name, raw))
	}
	return text, nil
}

// requiredString is plainString for a parameter the method cannot do without.
func (r *request) requiredString(name string) (string, error) {
	text, err := r.plainString(name)
	if err == nil && text == "" {
		err = protocolError("invalidRequest", fmt.Sprintf("%s needs params.%s", r.method, name))
	}
	return text, err
}

// optionalInt reads a plain (or, leniently, canonical) integer parameter; absent or null is (0, false).
func (r *request) optionalInt(name string) (int64, bool, error) {
	raw, ok := r.params[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return 0, false, nil
	}
	n, ok := plainInt(raw)
	if !ok {
		return 0, false, protocolError("invalidRequest", fmt.Sprintf("params.%s is not an integer: %s", name, raw))
	}
	return n, true, nil
}

// bsonParam decodes a BSON-valued parameter (canonical Extended JSON) into the driver's types.
func (r *request) bsonParam(name string) (any, bool, error) {
	raw, ok := r.params[name]
	if !ok {
		return nil, false, nil
	}
	value, err := decodeValue(raw)
	if err != nil {
		return nil, true, protocolError("invalidRequest", fmt.Sprintf("params.%s is not Extended JSON: %v", name, err))
	}
	return value, true, nil
}

// decodeValue turns any Extended JSON value (not only a document) into the driver's BSON types by wrapping it
// in a one-field document for the driver's parser.
func decodeValue(raw json.RawMessage) (any, error) {
	wrapped := make([]byte, 0, len(raw)+6)
	wrapped = append(wrapped, `{"v":`...)
	wrapped = append(wrapped, raw...)
	wrapped = append(wrapped, '}')
	var doc bson.D
	if err := bson.UnmarshalExtJSON(wrapped, true, &doc); err != nil {
		return nil, err
	}
	return doc[0].Value, nil
}

// encodeValue writes any BSON value as canonical Extended JSON with the driver's encoder (the value goes in a
// one-field document, which is then taken apart again with its bytes untouched).
func encodeValue(value any) (json.RawMessage, error) {
	text, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: value}}, true, false)
	if err != nil {
		return nil, err
	}
	var wrapper map[string]json.RawMessage
	if err := json.Unmarshal(text, &wrapper); err != nil {
		return nil, err
	}
	return wrapper["v"], nil
}

// replyWriter owns stdout: one JSON object per line, flushed at once.
type replyWriter struct {
	out *bufio.Writer
}

func newReplyWriter() *replyWriter {
	return &replyWriter{out: bufio.NewWriterSize(os.Stdout, 1<<16)}
}

// reply is what one request answers, before encoding.
type reply struct {
	ok         bool
	result     json.RawMessage // already encoded (canonical, or plain JSON for hello)
	resultKind string
	entity     string
	err        *protoErr
	nested     []json.RawMessage
}

func (w *replyWriter) write(id int64, r reply) {
	var line bytes.Buffer
	line.WriteString(`{"id":`)
	line.WriteString(strconv.FormatInt(id, 10))
	if r.ok {
		line.WriteString(`,"ok":true,"result":`)
		if r.result == nil {
			line.WriteString("null")
		} else {
			line.Write(r.result)
		}
		if r.resultKind != "" {
			line.WriteString(`,"resultKind":`)
			line.Write(mustJSON(r.resultKind))
		}
		if r.entity != "" {
			line.WriteString(`,"entity":`)
			line.Write(mustJSON(r.entity))
		}
	} else {
		line.WriteString(`,"ok":false,"error":`)
		line.Write(r.err.encode())
	}
	if r.nested != nil {
		line.WriteString(`,"nested":[`)
		for i, entry := range r.nested {
			if i > 0 {
				line.WriteByte(',')
			}
			line.Write(entry)
		}
		line.WriteByte(']')
	}
	line.WriteString("}\n")
	_, _ = w.out.Write(line.Bytes())
	_ = w.out.Flush()
}

// mustJSON encodes a plain Go value that cannot fail to encode (strings, bools, maps of them).
func mustJSON(value any) []byte {
	text, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	return text
}

// logf writes a diagnostic to stderr, the only place besides replies anything may go (section 1).
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-executor: "+format+"\n", args...)
}
