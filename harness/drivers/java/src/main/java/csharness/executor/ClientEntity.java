package csharness.executor;

import com.mongodb.client.MongoClient;

/** A client entity: the driver's client, what it observed, and its pool's checked-out count. */
final class ClientEntity {
    final MongoClient client;
    final EventLog log;
    final PoolEvents pool;

    ClientEntity(MongoClient client, EventLog log, PoolEvents pool) {
        this.client = client;
        this.log = log;
        this.pool = pool;
    }
}
