// Collection operations: CRUD, indexes, drop and rename, each replying in the unified format's result shape.
package main

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func init() {
	register(map[string]operation{
		"insertOne":              insertOne,
		"insertMany":             insertMany,
		"updateOne":              updateOne,
		"updateMany":             updateMany,
		"replaceOne":             replaceOne,
		"deleteOne":              deleteOne,
		"deleteMany":             deleteMany,
		"find":                   find,
		"countDocuments":         countDocuments,
		"estimatedDocumentCount": estimatedDocumentCount,
		"distinct":               distinct,
		"findOneAndUpdate":       findOneAndUpdate,
		"findOneAndReplace":      findOneAndReplace,
		"findOneAndDelete":       findOneAndDelete,
		"createIndex":            createIndex,
		"dropIndex":              dropIndex,
		"listIndexes":            listIndexes,
		"drop":                   dropCollectionItself,
		"rename":                 rename,
	})
}

func insertOne(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	document, err := c.args.requiredData("document")
	if err != nil {
		return outcome{}, err
	}
	opts := options.InsertOne()
	o := &optionReader{args: c.args}
	dataOption(o, "comment", opts.SetComment)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.InsertOne(c.ctx, document, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(bson.D{{Key: "insertedId", Value: result.InsertedID}})
}

func insertMany(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	documents, err := c.args.requiredData("documents")
	if err != nil {
		return outcome{}, err
	}
	opts := options.InsertMany()
	o := &optionReader{args: c.args}
	dataOption(o, "comment", opts.SetComment)
	boolOption(o, "ordered", opts.SetOrdered)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.InsertMany(c.ctx, documents, opts)
	if err != nil {
		return outcome{}, err
	}
	ids := bson.D{}
	for i, id := range result.InsertedIDs {
		ids = append(ids, bson.E{Key: strconv.Itoa(i), Value: id})
	}
	return valueOf(bson.D{{Key: "insertedIds", Value: ids}})
}

// updateResult answers an update or replace with the unified format's counts and any upserted id.
func updateResult(result *mongo.UpdateResult, err error) (outcome, error) {
	if err != nil {
		return outcome{}, err
	}
	doc := bson.D{
		{Key: "matchedCount", Value: result.MatchedCount},
		{Key: "modifiedCount", Value: result.ModifiedCount},
		{Key: "upsertedCount", Value: result.UpsertedCount},
	}
	if result.UpsertedID != nil {
		doc = append(doc, bson.E{Key: "upsertedId", Value: result.UpsertedID})
	}
	return valueOf(doc)
}

// deleteResult answers a delete with the unified format's count.
func deleteResult(result *mongo.DeleteResult, err error) (outcome, error) {
	if err != nil {
		return outcome{}, err
	}
	return valueOf(bson.D{{Key: "deletedCount", Value: result.DeletedCount}})
}

// filtered is the frame every filtered write shares: the collection, the filter, one more data argument when
// second names one, then the options (read by read, refusing any argument left unread) before run sends it.
func filtered(c *call, second string, read func(*optionReader),
	run func(coll *mongo.Collection, filter, other any) (outcome, error)) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	var other any
	if second != "" {
		if other, err = c.args.requiredData(second); err != nil {
			return outcome{}, err
		}
	}
	o := &optionReader{args: c.args}
	read(o)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return run(coll, filter, other)
}

// matchOptions are the setters every filtered write's options builder has, read in this order.
type matchOptions[B any] interface {
	SetCollation(*options.Collation) B
	SetComment(any) B
	SetHint(any) B
}

func readMatchOptions[B any](o *optionReader, opts matchOptions[B]) {
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
}

// upsertOptions are the setters an update's and a replace's options builders share, read in this order.
type upsertOptions[B any] interface {
	matchOptions[B]
	SetBypassDocumentValidation(bool) B
	SetUpsert(bool) B
	SetLet(any) B
}

func readUpsertOptions[B any](o *optionReader, opts upsertOptions[B]) {
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	readMatchOptions(o, opts)
	boolOption(o, "upsert", opts.SetUpsert)
	dataOption(o, "let", opts.SetLet)
}

func updateOne(c *call) (outcome, error) {
	opts := options.UpdateOne()
	return filtered(c, "update", func(o *optionReader) {
		arrayOption(o, "arrayFilters", opts.SetArrayFilters)
		readUpsertOptions(o, opts)
		dataOption(o, "sort", opts.SetSort)
	}, func(coll *mongo.Collection, filter, update any) (outcome, error) {
		return updateResult(coll.UpdateOne(c.ctx, filter, update, opts))
	})
}

func updateMany(c *call) (outcome, error) {
	opts := options.UpdateMany()
	return filtered(c, "update", func(o *optionReader) {
		arrayOption(o, "arrayFilters", opts.SetArrayFilters)
		readUpsertOptions(o, opts)
	}, func(coll *mongo.Collection, filter, update any) (outcome, error) {
		return updateResult(coll.UpdateMany(c.ctx, filter, update, opts))
	})
}

func replaceOne(c *call) (outcome, error) {
	opts := options.Replace()
	return filtered(c, "replacement", func(o *optionReader) {
		readUpsertOptions(o, opts)
		dataOption(o, "sort", opts.SetSort)
	}, func(coll *mongo.Collection, filter, replacement any) (outcome, error) {
		return updateResult(coll.ReplaceOne(c.ctx, filter, replacement, opts))
	})
}

func deleteOne(c *call) (outcome, error) {
	opts := options.DeleteOne()
	return filtered(c, "", func(o *optionReader) {
		readMatchOptions(o, opts)
		dataOption(o, "let", opts.SetLet)
	}, func(coll *mongo.Collection, filter, _ any) (outcome, error) {
		return deleteResult(coll.DeleteOne(c.ctx, filter, opts))
	})
}

func deleteMany(c *call) (outcome, error) {
	opts := options.DeleteMany()
	return filtered(c, "", func(o *optionReader) {
		readMatchOptions(o, opts)
		dataOption(o, "let", opts.SetLet)
	}, func(coll *mongo.Collection, filter, _ any) (outcome, error) {
		return deleteResult(coll.DeleteMany(c.ctx, filter, opts))
	})
}

func find(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, ok := c.args.data("filter")
	if !ok {
		filter = bson.D{}
	}
	opts := options.Find()
	o := &optionReader{args: c.args}
	boolOption(o, "allowDiskUse", opts.SetAllowDiskUse)
	boolOption(o, "allowPartialResults", opts.SetAllowPartialResults)
	int32Option(o, "batchSize", opts.SetBatchSize)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	int64Option(o, "limit", opts.SetLimit)
	dataOption(o, "max", opts.SetMax)
	dataOption(o, "min", opts.SetMin)
	boolOption(o, "noCursorTimeout", opts.SetNoCursorTimeout)
	dataOption(o, "projection", opts.SetProjection)
	boolOption(o, "returnKey", opts.SetReturnKey)
	boolOption(o, "showRecordId", opts.SetShowRecordID)
	int64Option(o, "skip", opts.SetSkip)
	dataOption(o, "sort", opts.SetSort)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	cursor, err := coll.Find(c.ctx, filter, opts)
	return drain(c, cursor, err)
}

// drain reads a whole cursor for a "documents" result.
func drain(c *call, cursor *mongo.Cursor, err error) (outcome, error) {
	if err != nil {
		return outcome{}, err
	}
	var docs []bson.Raw
	if err := cursor.All(c.ctx, &docs); err != nil {
		return outcome{}, err
	}
	return documentsOf(docs)
}

func countDocuments(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	opts := options.Count()
	o := &optionReader{args: c.args}
	readMatchOptions(o, opts)
	int64Option(o, "limit", opts.SetLimit)
	int64Option(o, "skip", opts.SetSkip)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	count, err := coll.CountDocuments(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(count)
}

func estimatedDocumentCount(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	opts := options.EstimatedDocumentCount()
	o := &optionReader{args: c.args}
	dataOption(o, "comment", opts.SetComment)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	count, err := coll.EstimatedDocumentCount(c.ctx, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(count)
}

func distinct(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	field, err := c.args.requiredString("fieldName")
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	opts := options.Distinct()
	o := &optionReader{args: c.args}
	readMatchOptions(o, opts)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result := coll.Distinct(c.ctx, field, filter, opts)
	if err := result.Err(); err != nil {
		return outcome{}, err
	}
	var values bson.A
	if err := result.Decode(&values); err != nil {
		return outcome{}, err
	}
	if values == nil {
		values = bson.A{}
	}
	return valueOf(values)
}

// returnDocument reads findOneAnd*'s returnDocument ("Before"/"After", as the unified format spells it).
func returnDocument[B any](o *optionReader, set func(options.ReturnDocument) B) {
	value, ok, err := o.args.str("returnDocument")
	switch {
	case err != nil:
		o.fail(err)
	case !ok:
	case value == "Before" || value == "before":
		set(options.Before)
	case value == "After" || value == "after":
		set(options.After)
	default:
		o.fail(invalidRequest("returnDocument must be Before or After, got %q", value))
	}
}

// singleDocument answers a findOneAnd* result: the document, or null when none matched.
func singleDocument(result *mongo.SingleResult) (outcome, error) {
	raw, err := result.Raw()
	if err == mongo.ErrNoDocuments {
		return valueOf(nil)
	}
	if err != nil {
		return outcome{}, err
	}
	return valueOf(raw)
}

// findModifyOptions are the setters every findOneAnd* options builder has, read in this order.
type findModifyOptions[B any] interface {
	matchOptions[B]
	SetLet(any) B
	SetProjection(any) B
}

func readFindModifyOptions[B any](o *optionReader, opts findModifyOptions[B]) {
	readMatchOptions(o, opts)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "projection", opts.SetProjection)
}

func findOneAndUpdate(c *call) (outcome, error) {
	opts := options.FindOneAndUpdate()
	return filtered(c, "update", func(o *optionReader) {
		arrayOption(o, "arrayFilters", opts.SetArrayFilters)
		boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
		readFindModifyOptions(o, opts)
		returnDocument(o, opts.SetReturnDocument)
		dataOption(o, "sort", opts.SetSort)
		boolOption(o, "upsert", opts.SetUpsert)
	}, func(coll *mongo.Collection, filter, update any) (outcome, error) {
		return singleDocument(coll.FindOneAndUpdate(c.ctx, filter, update, opts))
	})
}

func findOneAndReplace(c *call) (outcome, error) {
	opts := options.FindOneAndReplace()
	return filtered(c, "replacement", func(o *optionReader) {
		boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
		readFindModifyOptions(o, opts)
		returnDocument(o, opts.SetReturnDocument)
		dataOption(o, "sort", opts.SetSort)
		boolOption(o, "upsert", opts.SetUpsert)
	}, func(coll *mongo.Collection, filter, replacement any) (outcome, error) {
		return singleDocument(coll.FindOneAndReplace(c.ctx, filter, replacement, opts))
	})
}

func findOneAndDelete(c *call) (outcome, error) {
	opts := options.FindOneAndDelete()
	return filtered(c, "", func(o *optionReader) {
		readFindModifyOptions(o, opts)
		dataOption(o, "sort", opts.SetSort)
	}, func(coll *mongo.Collection, filter, _ any) (outcome, error) {
		return singleDocument(coll.FindOneAndDelete(c.ctx, filter, opts))
	})
}

func createIndex(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	keys, err := c.args.requiredData("keys")
	if err != nil {
		return outcome{}, err
	}
	index := options.Index()
	o := &optionReader{args: c.args}
	stringOption(o, "name", index.SetName)
	boolOption(o, "unique", index.SetUnique)
	boolOption(o, "sparse", index.SetSparse)
	boolOption(o, "hidden", index.SetHidden)
	int32Option(o, "expireAfterSeconds", index.SetExpireAfterSeconds)
	dataOption(o, "partialFilterExpression", index.SetPartialFilterExpression)
	collationOption(o, index.SetCollation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	name, err := coll.Indexes().CreateOne(c.ctx, mongo.IndexModel{Keys: keys, Options: index})
	if err != nil {
		return outcome{}, err
	}
	return valueOf(name)
}

func dropIndex(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	name, err := c.args.requiredString("name")
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	return nothing(coll.Indexes().DropOne(c.ctx, name))
}

func listIndexes(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	opts := options.ListIndexes()
	o := &optionReader{args: c.args}
	int32Option(o, "batchSize", opts.SetBatchSize)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	cursor, err := coll.Indexes().List(c.ctx, opts)
	return drain(c, cursor, err)
}

func dropCollectionItself(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	return nothing(coll.Drop(c.ctx))
}

// rename has no collection helper in the Go driver; applications run renameCollection on admin through the
// driver's RunCommand, and so does the executor (with the operation's session and timeout).
func rename(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	to, err := c.args.requiredString("to")
	if err != nil {
		return outcome{}, err
	}
	namespace := coll.Database().Name() + "."
	command := bson.D{{Key: "renameCollection", Value: namespace + coll.Name()}, {Key: "to", Value: namespace + to}}
	if dropTarget, ok, err := c.args.boolean("dropTarget"); err != nil {
		return outcome{}, err
	} else if ok {
		command = append(command, bson.E{Key: "dropTarget", Value: dropTarget})
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	reply, err := coll.Database().Client().Database("admin").RunCommand(c.ctx, command).Raw()
	if err != nil {
		return outcome{}, err
	}
	return valueOf(reply)
}
