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

func updateResult(result *mongo.UpdateResult) (outcome, error) {
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

func updateOne(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, update, err := filterAnd(c, "update")
	if err != nil {
		return outcome{}, err
	}
	opts := options.UpdateOne()
	o := &optionReader{args: c.args}
	arrayOption(o, "arrayFilters", opts.SetArrayFilters)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	boolOption(o, "upsert", opts.SetUpsert)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "sort", opts.SetSort)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.UpdateOne(c.ctx, filter, update, opts)
	if err != nil {
		return outcome{}, err
	}
	return updateResult(result)
}

func updateMany(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, update, err := filterAnd(c, "update")
	if err != nil {
		return outcome{}, err
	}
	opts := options.UpdateMany()
	o := &optionReader{args: c.args}
	arrayOption(o, "arrayFilters", opts.SetArrayFilters)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	boolOption(o, "upsert", opts.SetUpsert)
	dataOption(o, "let", opts.SetLet)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.UpdateMany(c.ctx, filter, update, opts)
	if err != nil {
		return outcome{}, err
	}
	return updateResult(result)
}

func replaceOne(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, replacement, err := filterAnd(c, "replacement")
	if err != nil {
		return outcome{}, err
	}
	opts := options.Replace()
	o := &optionReader{args: c.args}
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	boolOption(o, "upsert", opts.SetUpsert)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "sort", opts.SetSort)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.ReplaceOne(c.ctx, filter, replacement, opts)
	if err != nil {
		return outcome{}, err
	}
	return updateResult(result)
}

// filterAnd reads the filter and the one other data argument an update or replace needs.
func filterAnd(c *call, second string) (any, any, error) {
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return nil, nil, err
	}
	other, err := c.args.requiredData(second)
	return filter, other, err
}

func deleteOne(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	opts := options.DeleteOne()
	o := &optionReader{args: c.args}
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.DeleteOne(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(bson.D{{Key: "deletedCount", Value: result.DeletedCount}})
}

func deleteMany(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	opts := options.DeleteMany()
	o := &optionReader{args: c.args}
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.DeleteMany(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(bson.D{{Key: "deletedCount", Value: result.DeletedCount}})
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
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
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
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
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

func findOneAndUpdate(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, update, err := filterAnd(c, "update")
	if err != nil {
		return outcome{}, err
	}
	opts := options.FindOneAndUpdate()
	o := &optionReader{args: c.args}
	arrayOption(o, "arrayFilters", opts.SetArrayFilters)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "projection", opts.SetProjection)
	returnDocument(o, opts.SetReturnDocument)
	dataOption(o, "sort", opts.SetSort)
	boolOption(o, "upsert", opts.SetUpsert)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return singleDocument(coll.FindOneAndUpdate(c.ctx, filter, update, opts))
}

func findOneAndReplace(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, replacement, err := filterAnd(c, "replacement")
	if err != nil {
		return outcome{}, err
	}
	opts := options.FindOneAndReplace()
	o := &optionReader{args: c.args}
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "projection", opts.SetProjection)
	returnDocument(o, opts.SetReturnDocument)
	dataOption(o, "sort", opts.SetSort)
	boolOption(o, "upsert", opts.SetUpsert)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return singleDocument(coll.FindOneAndReplace(c.ctx, filter, replacement, opts))
}

func findOneAndDelete(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	filter, err := c.args.requiredData("filter")
	if err != nil {
		return outcome{}, err
	}
	opts := options.FindOneAndDelete()
	o := &optionReader{args: c.args}
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	dataOption(o, "projection", opts.SetProjection)
	dataOption(o, "sort", opts.SetSort)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return singleDocument(coll.FindOneAndDelete(c.ctx, filter, opts))
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
