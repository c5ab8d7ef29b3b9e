// Not a deviation: why the executor's `next` iteration mode (docs/executor-protocol.md, section 6.4.1) cannot
// bound the driver's blocking ChangeStream.Next by the executor's budget. Next blocks until a change, an error
// or the end of its context; the only way to stop it is to cancel that context, and a canceled context ends
// the stream for good (loopNext treats the canceled getMore as resumable, the resume's aggregate fails under the
// same canceled context, and cs.err stays set: Next and TryNext return false from then on).
package main

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func init() {
	cases["next-cancel-ends-stream"] = nextCancelEndsStream
}

// nextCancelEndsStream: Next on an idle stream under a context canceled after 300 ms (no deadline, so no CSOT),
// then a change is written and the stream is asked again with a live context.
func nextCancelEndsStream(uri string) error {
	client, log, err := connect(uri)
	if err != nil {
		return err
	}
	defer disconnect(client)
	coll, err := freshCollection(client, "nextCancel")
	if err != nil {
		return err
	}
	stream, err := coll.Watch(background, mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(200*time.Millisecond))
	if err != nil {
		return err
	}
	defer func() { _ = stream.Close(background) }()
	ctx, cancel := context.WithCancel(background)
	timer := time.AfterFunc(300*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	got := stream.Next(ctx)
	fmt.Printf("   Next under a context canceled after 300 ms: %v after %d ms, Err %v, ID %d; commands: %s\n",
		got, time.Since(start).Milliseconds(), stream.Err(), stream.ID(), log.names())
	if _, err := coll.InsertOne(background, bson.D{{Key: "_id", Value: 1}}); err != nil {
		return err
	}
	log.started = nil
	got = stream.TryNext(background) || stream.TryNext(background)
	fmt.Printf("   after an insert, TryNext with a live context: %v, Err %v; commands: %s\n", got, stream.Err(), log.names())
	next, cancelNext := context.WithTimeout(background, 2*time.Second)
	defer cancelNext()
	got = stream.Next(next)
	fmt.Printf("   and Next with a live context: %v, Err %v; commands: %s\n", got, stream.Err(), log.names())
	return nil
}
