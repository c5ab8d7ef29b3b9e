// Database and client operations: runCommand, aggregate, collections and databases.
package main

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func init() {
	register(map[string]operation{
		"runCommand":          runCommand,
		"aggregate":           aggregate,
		"createCollection":    createCollection,
		"dropCollection":      dropCollection,
		"listCollections":     listCollections,
		"listCollectionNames": listCollectionNames,
		"listDatabases":       listDatabases,
		"listDatabaseNames":   listDatabaseNames,
	})
}

func runCommand(c *call) (outcome, error) {
	db, err := c.database()
	if err != nil {
		return outcome{}, err
	}
	command, err := c.args.requiredData("command")
	if err != nil {
		return outcome{}, err
	}
	// commandName names the command for languages whose maps lose key order; the Go document keeps it.
	if _, _, err := c.args.str("commandName"); err != nil {
		return outcome{}, err
	}
	opts := options.RunCmd()
	if raw, ok := c.args.lookup("readPreference"); ok {
		rp, err := readPreferenceOf("runCommand", raw)
		if err != nil {
			return outcome{}, err
		}
		opts.SetReadPreference(rp)
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	reply, err := db.RunCommand(c.ctx, command, opts).Raw()
	if err != nil {
		return outcome{}, err
	}
	return valueOf(reply)
}

// aggregate runs on a collection or a database (a collection-less aggregate).
func aggregate(c *call) (outcome, error) {
	pipeline, err := c.args.requiredData("pipeline")
	if err != nil {
		return outcome{}, err
	}
	opts := options.Aggregate()
	o := &optionReader{args: c.args}
	boolOption(o, "allowDiskUse", opts.SetAllowDiskUse)
	int32Option(o, "batchSize", opts.SetBatchSize)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	collationOption(o, opts.SetCollation)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "hint", opts.SetHint)
	dataOption(o, "let", opts.SetLet)
	msOption(o, "maxAwaitTimeMS", opts.SetMaxAwaitTime)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	var cursor *mongo.Cursor
	switch target := c.target.(type) {
	case *mongo.Collection:
		cursor, err = target.Aggregate(c.ctx, pipeline, opts)
	case *mongo.Database:
		cursor, err = target.Aggregate(c.ctx, pipeline, opts)
	default:
		return outcome{}, c.wrongTarget()
	}
	return drain(c, cursor, err)
}

func createCollection(c *call) (outcome, error) {
	db, err := c.database()
	if err != nil {
		return outcome{}, err
	}
	name, err := c.args.requiredString("collection")
	if err != nil {
		return outcome{}, err
	}
	if c.args.has("viewOn") {
		return createView(c, db, name)
	}
	opts := options.CreateCollection()
	o := &optionReader{args: c.args}
	boolOption(o, "capped", opts.SetCapped)
	int64Option(o, "size", opts.SetSizeInBytes)
	int64Option(o, "max", opts.SetMaxDocuments)
	dataOption(o, "changeStreamPreAndPostImages", opts.SetChangeStreamPreAndPostImages)
	dataOption(o, "validator", opts.SetValidator)
	stringOption(o, "validationAction", opts.SetValidationAction)
	stringOption(o, "validationLevel", opts.SetValidationLevel)
	int64Option(o, "expireAfterSeconds", opts.SetExpireAfterSeconds)
	dataOption(o, "clusteredIndex", opts.SetClusteredIndex)
	dataOption(o, "encryptedFields", opts.SetEncryptedFields)
	dataOption(o, "storageEngine", opts.SetStorageEngine)
	collationOption(o, opts.SetCollation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return nothing(db.CreateCollection(c.ctx, name, opts))
}

// createView is createCollection with viewOn: the Go driver has a helper of its own for views.
func createView(c *call, db *mongo.Database, name string) (outcome, error) {
	viewOn, err := c.args.requiredString("viewOn")
	if err != nil {
		return outcome{}, err
	}
	pipeline, ok := c.args.data("pipeline")
	if !ok {
		pipeline = bson.A{}
	}
	opts := options.CreateView()
	o := &optionReader{args: c.args}
	collationOption(o, opts.SetCollation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	return nothing(db.CreateView(c.ctx, name, viewOn, pipeline, opts))
}

func dropCollection(c *call) (outcome, error) {
	db, err := c.database()
	if err != nil {
		return outcome{}, err
	}
	name, err := c.args.requiredString("collection")
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	return nothing(db.Collection(name).Drop(c.ctx))
}

func listCollectionsOptions(c *call) (any, *options.ListCollectionsOptionsBuilder, error) {
	filter, ok := c.args.data("filter")
	if !ok {
		filter = bson.D{}
	}
	opts := options.ListCollections()
	o := &optionReader{args: c.args}
	int32Option(o, "batchSize", opts.SetBatchSize)
	boolOption(o, "nameOnly", opts.SetNameOnly)
	boolOption(o, "authorizedCollections", opts.SetAuthorizedCollections)
	return filter, opts, o.done()
}

func listCollections(c *call) (outcome, error) {
	db, err := c.database()
	if err != nil {
		return outcome{}, err
	}
	filter, opts, err := listCollectionsOptions(c)
	if err != nil {
		return outcome{}, err
	}
	cursor, err := db.ListCollections(c.ctx, filter, opts)
	return drain(c, cursor, err)
}

func listCollectionNames(c *call) (outcome, error) {
	db, err := c.database()
	if err != nil {
		return outcome{}, err
	}
	filter, opts, err := listCollectionsOptions(c)
	if err != nil {
		return outcome{}, err
	}
	names, err := db.ListCollectionNames(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(stringsArray(names))
}

func (c *call) clientTarget() (*mongo.Client, error) {
	if client, ok := c.target.(*clientEntity); ok {
		return client.client, nil
	}
	return nil, c.wrongTarget()
}

func listDatabases(c *call) (outcome, error) {
	client, err := c.clientTarget()
	if err != nil {
		return outcome{}, err
	}
	filter, opts, err := listDatabasesOptions(c)
	if err != nil {
		return outcome{}, err
	}
	result, err := client.ListDatabases(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	docs := make([]bson.Raw, 0, len(result.Databases))
	for _, spec := range result.Databases {
		raw, err := bson.Marshal(bson.D{{Key: "name", Value: spec.Name}, {Key: "sizeOnDisk", Value: spec.SizeOnDisk}, {Key: "empty", Value: spec.Empty}})
		if err != nil {
			return outcome{}, err
		}
		docs = append(docs, raw)
	}
	return documentsOf(docs)
}

func listDatabaseNames(c *call) (outcome, error) {
	client, err := c.clientTarget()
	if err != nil {
		return outcome{}, err
	}
	filter, opts, err := listDatabasesOptions(c)
	if err != nil {
		return outcome{}, err
	}
	names, err := client.ListDatabaseNames(c.ctx, filter, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(stringsArray(names))
}

func listDatabasesOptions(c *call) (any, *options.ListDatabasesOptionsBuilder, error) {
	filter, ok := c.args.data("filter")
	if !ok {
		filter = bson.D{}
	}
	opts := options.ListDatabases()
	o := &optionReader{args: c.args}
	boolOption(o, "nameOnly", opts.SetNameOnly)
	boolOption(o, "authorizedDatabases", opts.SetAuthorizedDatabases)
	return filter, opts, o.done()
}

func stringsArray(names []string) bson.A {
	out := bson.A{}
	for _, name := range names {
		out = append(out, name)
	}
	return out
}
