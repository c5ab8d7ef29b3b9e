// The reproduction cases, one function each; each prints the commands the driver sent and what it returned.
package main

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var background = context.Background()

func disconnect(client *mongo.Client) { _ = client.Disconnect(background) }

// failPointOff disarms failCommand (a case whose failpoint the driver never hit must not leave it armed).
func failPointOff(uri string) {
	admin, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return
	}
	defer disconnect(admin)
	_ = admin.Database("admin").RunCommand(background, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err()
}

var resumableGetMoreError = bson.D{
	{Key: "failCommands", Value: bson.A{"getMore"}}, {Key: "errorCode", Value: 280},
	{Key: "errorLabels", Value: bson.A{"ResumableChangeStreamError"}},
}

// cursorAllEmptyBatch: Cursor.All stops at an empty batch of a live cursor (the CRUD spec's cursor iteration; no
// change-stream rule: the aggregate helper itself sends the pipeline as given and does not resume).
func cursorAllEmptyBatch(uri string) error {
	client, log, err := connect(uri)
	if err != nil {
		return err
	}
	defer disconnect(client)
	coll, err := freshCollection(client, "cursorAll")
	if err != nil {
		return err
	}
	if _, err := coll.InsertMany(background, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
		return err
	}
	log.started = nil
	cursor, err := coll.Find(background, bson.D{}, options.Find().SetBatchSize(0))
	if err != nil {
		return err
	}
	var docs []bson.Raw
	err = cursor.All(background, &docs)
	fmt.Printf("   find(batchSize 0) over 3 documents, Cursor.All: %d document(s), error %v; commands: %s\n", len(docs), err, log.names())

	log.started = nil
	if err := failPoint(uri, resumableGetMoreError); err != nil {
		return err
	}
	defer failPointOff(uri)
	cursor, err = coll.Aggregate(background, bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}})
	if err != nil {
		return err
	}
	err = cursor.All(background, &docs)
	fmt.Printf("   aggregate([{$changeStream: {}}]) with getMore armed to fail (280), Cursor.All: %d document(s), error %v; commands: %s\n",
		len(docs), err, log.names())
	return nil
}

// cursorTimeouts: a timeout given when the stream is created bounds its aggregate only (CS-CURSOR-TIMEOUTS).
func cursorTimeouts(uri string) error {
	client, log, err := connect(uri)
	if err != nil {
		return err
	}
	defer disconnect(client)
	coll, err := freshCollection(client, "timeouts")
	if err != nil {
		return err
	}
	open := func(timeout time.Duration) (*mongo.ChangeStream, error) {
		ctx, cancel := context.WithTimeout(background, timeout)
		defer cancel()
		return coll.Watch(ctx, mongo.Pipeline{})
	}

	stream, err := open(400 * time.Millisecond)
	if err != nil {
		return err
	}
	blocked := bson.D{{Key: "failCommands", Value: bson.A{"getMore"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 1000}}
	if err := failPoint(uri, blocked); err != nil {
		return err
	}
	start := time.Now()
	got := stream.TryNext(background) || stream.TryNext(background) // the first only hands out the empty first batch
	fmt.Printf("   stream opened under a 400 ms timeout, getMore held 1000 ms: TryNext %v, error %v, after %d ms; commands: %s\n",
		got, stream.Err(), time.Since(start).Milliseconds(), log.names())
	_ = stream.Close(background)

	log.started = nil
	stream, err = open(1000 * time.Millisecond)
	if err != nil {
		return err
	}
	resumeBlocked := bson.D{
		{Key: "failCommands", Value: bson.A{"getMore", "aggregate"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 600},
		{Key: "errorCode", Value: 280}, {Key: "errorLabels", Value: bson.A{"ResumableChangeStreamError"}},
	}
	admin, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer disconnect(admin)
	command := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 2}}}, {Key: "data", Value: resumeBlocked}}
	if err := admin.Database("admin").RunCommand(background, command).Err(); err != nil {
		return err
	}
	start = time.Now()
	got = stream.TryNext(background) || stream.TryNext(background)
	fmt.Printf("   stream opened under a 1000 ms timeout, getMore and the resume's aggregate held 600 ms then failing with 280: TryNext %v, error %v, after %d ms; commands: %s\n",
		got, stream.Err(), time.Since(start).Milliseconds(), log.names())
	return nil
}

// missingResumeToken: the batch's last event is returned without its _id when a postBatchResumeToken came
// with it (CS-TOKEN-MISSING-MESSAGE, prose 2).
func missingResumeToken(uri string) error {
	client, log, err := connect(uri, options.Client().SetDialer(rewritingDialer{rewrite: withoutEventIDs}))
	if err != nil {
		return err
	}
	defer disconnect(client)
	writer, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer disconnect(writer)
	coll, err := freshCollection(writer, "missingToken")
	if err != nil {
		return err
	}
	stream, err := client.Database("repro").Collection("missingToken").Watch(background, mongo.Pipeline{})
	if err != nil {
		return err
	}
	if _, err := coll.InsertOne(background, bson.D{{Key: "_id", Value: 2}}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(background, 5*time.Second)
	defer cancel()
	got := stream.Next(ctx)
	_, idErr := stream.Current.LookupErr("_id")
	fmt.Printf("   an insert event whose _id was removed on the wire: Next %v, error %v, the document has _id: %v; commands: %s\n",
		got, stream.Err(), idErr == nil, log.names())
	return nil
}

// resumeOperationTime: with no token cached, the resume sends the session's latest operationTime instead of
// the one saved from the initial aggregate (prose 9).
func resumeOperationTime(uri string) error {
	client, log, err := connect(uri, options.Client().SetDialer(rewritingDialer{rewrite: withoutPostBatchResumeToken}))
	if err != nil {
		return err
	}
	defer disconnect(client)
	writer, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer disconnect(writer)
	if _, err := freshCollection(writer, "operationTime"); err != nil {
		return err
	}
	log.started = nil
	stream, err := client.Database("repro").Collection("operationTime").Watch(background, mongo.Pipeline{})
	if err != nil {
		return err
	}
	// Later writes elsewhere move the cluster time on; the stream's getMores then carry later operationTimes.
	for i := 0; i < 3; i++ {
		if _, err := writer.Database("repro").Collection("elsewhere").InsertOne(background, bson.D{{Key: "i", Value: i}}); err != nil {
			return err
		}
		stream.TryNext(background)
	}
	if err := failPoint(uri, resumableGetMoreError); err != nil {
		return err
	}
	stream.TryNext(background)
	aggregates, replies := log.commands("aggregate")
	if len(aggregates) < 2 || replies[0] == nil {
		return fmt.Errorf("expected the initial aggregate and a resume, sent: %s", log.names())
	}
	saved := replies[0].Lookup("operationTime")
	fmt.Printf("   initial aggregate's operationTime %s (no postBatchResumeToken, no event); the resume's $changeStream: %s; commands: %s\n",
		saved, changeStreamStage(aggregates[1]), log.names())
	return nil
}

// resumeKeepsStartAfter: a stream started with startAfter that has returned nothing resumes with resumeAfter
// (prose 17).
func resumeKeepsStartAfter(uri string) error {
	client, log, err := connect(uri)
	if err != nil {
		return err
	}
	defer disconnect(client)
	coll, err := freshCollection(client, "startAfter")
	if err != nil {
		return err
	}
	first, err := coll.Watch(background, mongo.Pipeline{})
	if err != nil {
		return err
	}
	if _, err := coll.InsertOne(background, bson.D{{Key: "_id", Value: 1}}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(background, 5*time.Second)
	defer cancel()
	if !first.Next(ctx) {
		return fmt.Errorf("no event to start after: %v", first.Err())
	}
	token := first.Current.Lookup("_id").Document()
	_ = first.Close(background)

	log.started = nil
	stream, err := coll.Watch(background, mongo.Pipeline{}, options.ChangeStream().SetStartAfter(token))
	if err != nil {
		return err
	}
	if err := failPoint(uri, resumableGetMoreError); err != nil {
		return err
	}
	got := stream.TryNext(background) || stream.TryNext(background)
	aggregates, _ := log.commands("aggregate")
	if len(aggregates) < 2 {
		return fmt.Errorf("expected the initial aggregate and a resume, sent: %s", log.names())
	}
	fmt.Printf("   started with startAfter, no document returned, getMore failed (280, resumable): TryNext %v; first $changeStream %s; the resume's $changeStream %s\n",
		got, changeStreamStage(aggregates[0]), changeStreamStage(aggregates[1]))
	return nil
}
