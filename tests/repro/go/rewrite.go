// A dialer whose connections rewrite the server's cursor replies on their way to the driver, for the cases
// that need a reply no server sends: a change event without _id, a batch without postBatchResumeToken. It
// understands only what it touches: uncompressed OP_MSG replies with one body section and no flags; every
// other message passes through unchanged.
package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"

	"go.mongodb.org/mongo-driver/v2/bson"
)

const opMsg = 2013

// rewritingDialer dials as usual and wraps every connection so rewrite sees each cursor reply's `cursor`
// document and returns the one the driver gets.
type rewritingDialer struct {
	rewrite func(cursor bson.D) bson.D
}

func (d rewritingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &rewritingConn{Conn: conn, rewrite: d.rewrite}, nil
}

type rewritingConn struct {
	net.Conn
	rewrite func(cursor bson.D) bson.D
	pending []byte
}

// Read hands out the current message, reading (and rewriting) the next whole message when none is pending.
func (c *rewritingConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		message, err := c.readMessage()
		if err != nil {
			return 0, err
		}
		c.pending = message
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *rewritingConn) readMessage() ([]byte, error) {
	header := make([]byte, 16)
	if _, err := io.ReadFull(c.Conn, header); err != nil {
		return nil, err
	}
	length := int(binary.LittleEndian.Uint32(header[0:4]))
	body := make([]byte, length-16)
	if _, err := io.ReadFull(c.Conn, body); err != nil {
		return nil, err
	}
	opCode := binary.LittleEndian.Uint32(header[12:16])
	flags := binary.LittleEndian.Uint32(body[0:4])
	if opCode != opMsg || flags != 0 || len(body) < 5 || body[4] != 0 {
		return append(header, body...), nil
	}
	var reply bson.D
	if err := bson.Unmarshal(body[5:], &reply); err != nil {
		return append(header, body...), nil
	}
	for i, element := range reply {
		if cursor, ok := element.Value.(bson.D); ok && element.Key == "cursor" {
			reply[i].Value = c.rewrite(cursor)
		}
	}
	document, err := bson.Marshal(reply)
	if err != nil {
		return nil, err
	}
	message := make([]byte, 0, 21+len(document))
	message = append(message, header...)
	message = append(message, 0, 0, 0, 0, 0) // flags, then section kind 0
	message = append(message, document...)
	binary.LittleEndian.PutUint32(message[0:4], uint32(len(message)))
	return message, nil
}

// withoutEventIDs removes _id from every change event in a batch (what a server that let a pipeline drop it
// would send).
func withoutEventIDs(cursor bson.D) bson.D {
	for _, element := range cursor {
		batch, ok := element.Value.(bson.A)
		if !ok || (element.Key != "firstBatch" && element.Key != "nextBatch") {
			continue
		}
		for i, item := range batch {
			if event, ok := item.(bson.D); ok {
				kept := bson.D{}
				for _, field := range event {
					if field.Key != "_id" {
						kept = append(kept, field)
					}
				}
				batch[i] = kept
			}
		}
	}
	return cursor
}

// withoutPostBatchResumeToken removes the cursor's postBatchResumeToken (what a pre-4.0.7 server sends).
func withoutPostBatchResumeToken(cursor bson.D) bson.D {
	kept := bson.D{}
	for _, element := range cursor {
		if element.Key != "postBatchResumeToken" {
			kept = append(kept, element)
		}
	}
	return kept
}
