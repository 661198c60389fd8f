/**
 * Each command's `--help` (and `floe help <command>`): its usage, its flags one line each, an example.
 * Plain text with no imports, so `floe <command> --help` prints before any of floe's core loads; the
 * catalog options, shared by every command but demo, are catalog-options.ts's CATALOG_USAGE, which
 * main.ts prints below (withCatalogUsage); the Kafka connection flags are KAFKA_CONNECTION_HELP here.
 */

const CATALOG_LINE = `  <catalog>                --warehouse DIR | --table-bucket-arn ARN | --uri URL ... (catalog options below)`;

/** The flags of every command that talks to Kafka (connectionFromOptions in kafka-options.ts reads them). */
export const KAFKA_CONNECTION_HELP = `Kafka connection flags:
  --bootstrap-servers HOST:PORT[,...]   the brokers to start from (checked before anything is read)
  --client-id ID                        the client id the brokers see (default floe)
  --sasl-mechanism plain|scram-sha-256|scram-sha-512 --sasl-username U
                                        SASL; the password from FLOE_KAFKA_SASL_PASSWORD (or --sasl-password)
  --sasl-mechanism aws-msk-iam --tls [--aws-region R]
                                        Amazon MSK IAM auth (port 9098), default AWS credentials and AWS_REGION
  --tls                                 TLS to the brokers (their TLS port: often 9093; MSK 9094)
  --tls-ca FILE                         the CA that signed the brokers' certificate (PEM), for a private CA
  --tls-cert FILE --tls-key FILE        mutual TLS: this client's certificate and key (PEM)
  --tls-insecure                        do not check the brokers' certificate (testing only)
`;

const ROUTE_FLAGS = `  --table NS.NAME          the table (created when missing)
  --schema FILE            the table's Iceberg schema (JSON) when it is created; else inferred from the records
  --partition-by EXPR      partition spec of a new table, e.g. 'day(order_ts), bucket(16, id)'
  --sort-by EXPR           sort order of the files written, e.g. 'order_ts'
  --mode append|debezium|upsert
                           a row per record (default); change events; the key's latest value (null deletes)
  --identifier COL[,COL]   the key columns (debezium, upsert), kept with the table
  --delete-mode position|equality
                           how a new keyed table marks replaced rows (floe.delete-mode; default position)
  --kafka-value            keep each record's original value bytes in _kafka.value (floe.kafka-value)
  --format-version 2|3     the Iceberg format version of a new table (default 2; 3 keeps row lineage)
  --schema-evolution evolve|dlq|block
                           what a record with new fields does: widen the table, dead-letter, or fail
  --routes FILE            every route of FILE (the FLOE_TABLES JSON) instead of the flags above
`;

const RUN = `usage: floe run --bootstrap-servers HOST:PORT[,...] --topics T1[,T2] <catalog> (--table NS.NAME [route flags] | --routes FILE)
       [--group ID] [--batch-size N] [--batching-window-ms MS] [--exit-when-idle MS]
       [--starting-position latest|trim-horizon|at-timestamp [--starting-timestamp ISO]] [Kafka connection flags]

The Kafka event source mapping, locally: a consumer group reads the topics, forms ESM-sized events and
commits them to the tables; group offsets are committed only after the table commit.

flags:
  --topics T1[,T2]         the topics to read (each needs a route)
  --group ID               the consumer group (default floe-<tables>)
  --batch-size N           records per event, at most 10000 (default 100)
  --batching-window-ms MS  how long to gather a batch, 0–300000 (default 500)
  --starting-position P    where a partition the group never committed on starts: latest (default),
                           trim-horizon (its first record) or at-timestamp (first record at or after
                           --starting-timestamp; the brokers must support offset lookup by time)
  --exit-when-idle MS      stop once everything available is committed and nothing came for MS
  --session-timeout-ms MS  how long the group waits for a member that died (default 30000)
${CATALOG_LINE}
${ROUTE_FLAGS}
${KAFKA_CONNECTION_HELP}
example:
  floe run --bootstrap-servers localhost:9092 --topics orders --warehouse ./warehouse --table sales.orders \\
    --starting-position trim-horizon --exit-when-idle 5000
`;

const BACKFILL = `usage: floe backfill --bootstrap-servers HOST:PORT[,...] --topic T <catalog> (--table NS.NAME [route flags] | --routes FILE)
       [--from earliest|ISO-TIME] [--to latest|ISO-TIME] [--batch-size N] [Kafka connection flags]

An existing topic's history into a new or existing table, exactly once by the table's committed offsets,
without a consumer group; a rerun continues where a stopped one ended.

flags:
  --topic T                the topic to read
  --from earliest|ISO      where to start: the first record (default) or the first at or after a time
  --to latest|ISO          where to stop: the end when the backfill starts (default) or a time
                           (times need a broker that looks offsets up by time; floe says when it cannot)
  --batch-size N           records per event, at most 10000 (default 10000)
${CATALOG_LINE}
${ROUTE_FLAGS}
${KAFKA_CONNECTION_HELP}
example:
  floe backfill --bootstrap-servers localhost:9092 --topic orders --warehouse ./warehouse --table sales.orders \\
    --from 2026-11-01T00:00:00Z
`;

const REDRIVE_FAILED = `usage: floe redrive-failed (--from s3://BUCKET/PREFIX | --from-file PATH | --from-topic T --bootstrap-servers ...)
       <catalog> (--table NS.NAME [route flags] | --routes FILE)

The batches the ESM gave up on, ingested again through the table's route; each takes effect once (the
table skips offsets it has committed).

flags:
  --from s3://BUCKET/PREFIX  the ESM's S3 on-failure destination
  --from-file PATH           an on-failure record file, or a folder of them
  --from-topic T             a Kafka on-failure topic (with the Kafka connection flags)
${CATALOG_LINE}
${ROUTE_FLAGS}
${KAFKA_CONNECTION_HELP}
example:
  floe redrive-failed --from-file ./failed --warehouse ./warehouse --table sales.orders
`;

/** Per command: its help text. `scan --live` is the key `scan-live`. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  ingest: `usage: floe ingest <event.json...> <catalog> (--table NS.NAME [route flags] | --routes FILE)

Feeds Kafka ESM event files (what a Lambda receives from an MSK or self-managed Kafka event source)
through the ingest handler's code; creates the table when missing. A second run of the same event
writes nothing (the table's committed offsets).

flags:
${CATALOG_LINE}
  --topics T1[,T2]         the topics the route takes (default: every topic of the events)
${ROUTE_FLAGS}
example:
  floe ingest events/orders-batch-1.json --warehouse ./warehouse --table sales.orders \\
    --schema events/orders.schema.json --partition-by 'day(order_ts)'
`,
  scan: `usage: floe scan <catalog> --table NS.NAME [--where EXPR] [--json] [--limit N]
       floe scan <catalog> --table NS.NAME --live --bootstrap-servers ... (floe scan --live --help)

Prints the table's rows (deletes applied) and the pruning funnel: files and row groups skipped by the
partition values and column statistics.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --where EXPR             a filter, e.g. "country = 'DE' and order_ts >= '2026-11-22T00:00:00Z'"
  --json                   NDJSON rows on stdout (64-bit integers exact), the funnel on stderr
  --limit N                at most N rows
  --live                   the table plus the Kafka records it does not hold yet (see floe scan --live --help)

example:
  floe scan --warehouse ./warehouse --table sales.orders --where "country = 'DE'" --limit 10
`,
  'scan-live': `usage: floe scan <catalog> --table NS.NAME --live --bootstrap-servers HOST:PORT[,...]
       [--topics T1[,T2] | --routes FILE] [--where EXPR] [--json] [--limit N] [Kafka connection flags]

The table's rows plus the Kafka records it does not hold yet, mapped by its route (nothing is
committed); the funnel gains a hot line (records read per partition, offsets read up to).

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --topics T1[,T2]         the topics to read (default: those the table's committed offsets name)
  --routes FILE            map the tail with this routes file's entry for the table
  --where EXPR             a filter on the merged rows
  --json                   NDJSON rows on stdout, the funnel on stderr
  --limit N                at most N rows
  --kafka-timeout DURATION how long reading the tail may wait on Kafka before giving up (default 30s)
${KAFKA_CONNECTION_HELP}
example:
  floe scan --warehouse ./warehouse --table sales.orders --live --bootstrap-servers localhost:9092
`,
  inspect: `usage: floe inspect <catalog> --table NS.NAME [--json]

The table's snapshots with their summaries (records, files, committed Kafka offsets), its data and
delete files and their sizes.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --json                   the same as one JSON object

example:
  floe inspect --warehouse ./warehouse --table sales.orders
`,
  alter: `usage: floe alter <catalog> --table NS.NAME --partition-by EXPR

Partition evolution: data written from now on uses the new spec; files already written keep theirs.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --partition-by EXPR      the new spec, e.g. 'day(order_ts)' or 'bucket(16, customer_id), month(order_ts)'

example:
  floe alter --warehouse ./warehouse --table sales.orders --partition-by 'month(order_ts)'
`,
  dlq: `usage: floe dlq redrive <catalog> --table NS.NAME [--where EXPR] [--routes FILE] [--schema-evolution P]

Re-ingests the table's dead letters (its NS.NAME__dlq table) after a fix, each exactly once; the ones
that fail again stay.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table whose dead letters to redrive
  --where EXPR             only the dead letters matching it, e.g. "reason like '%schema%'"
  --routes FILE            take format, mapping and evolution policy from the table's route in FILE
  --schema-evolution evolve|dlq|block
                           the evolution policy for this redrive

example:
  floe dlq redrive --warehouse ./warehouse --table sales.orders --schema-evolution evolve
`,
  maintain: `usage: floe maintain all|convert-equality-deletes|compact|expire-snapshots|remove-orphans|rewrite-manifests
       <catalog> --table NS.NAME [--dry-run] [--older-than DURATION] [--retain-last N]

Table maintenance as the scheduled state machine runs it. all: convert equality deletes into position
deletes (tables in floe.delete-mode=position), compact, expire snapshots, remove orphan files, rewrite
manifests.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --dry-run                say what would be done, change nothing
  --older-than DURATION    snapshot age to expire and the orphan window: 30m, 6h, 3d (default: the
                           table's history.expire.max-snapshot-age-ms, 5d when unset)
  --retain-last N          snapshots always kept, however old (default: history.expire.min-snapshots-to-keep, 1)

example:
  floe maintain all --warehouse ./warehouse --table sales.orders --dry-run
`,
  demo: `usage: floe demo [--warehouse DIR]

Ingests the sample events of events/ into ./warehouse (or DIR) and shows the tables: orders, a
dead-lettered record, a Debezium change stream, an aggregate (what \`npm start\` runs).

flags:
  --warehouse DIR          where the tables go (default ./warehouse; created when missing)

example:
  floe demo --warehouse /tmp/floe-demo
`,
  run: RUN,
  backfill: BACKFILL,
  'redrive-failed': REDRIVE_FAILED,
  replay: `usage: floe replay <catalog> --table NS.NAME --bootstrap-servers HOST:PORT[,...] --to-topic OUT
       [--from-offsets P:O,... | --from-time ISO] [--to-offsets P:O,... | --to-time ISO]
       [--where EXPR] [--partitioning same|key] [--follow] [--idempotent] [--batch-size N]
       [Kafka connection flags]

The table's rows into OUT, per source partition in _kafka.offset order, with their original key,
headers and timestamp, the row (without _kafka) as exact JSON, and a floe-source header
(topic/partition/offset). Exactly once across kills: a rerun reads back what OUT holds and continues.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table to replay
  --to-topic OUT           the topic to write
  --from-offsets P:O,...   per source partition, the first offset to replay
  --to-offsets P:O,...     per source partition, the offset to stop before
  --from-time ISO          only rows whose Kafka timestamp is at or after it (read from the table)
  --to-time ISO            only rows whose Kafka timestamp is before it
  --where EXPR             only rows matching it
  --partitioning same|key  source partition N → OUT partition N (default), or by the key
  --follow                 then the source topics' records past the table, until SIGINT/SIGTERM
  --idempotent             kafkajs's idempotent producer too (where the broker supports it)
  --batch-size N           records per produce request, at most 10000 (default 500)
${KAFKA_CONNECTION_HELP}
example:
  floe replay --warehouse ./warehouse --table sales.orders --bootstrap-servers localhost:9092 --to-topic orders-fixed
`,
  serve: `usage: floe serve <catalog> --port P [--host 127.0.0.1]
       [--live --bootstrap-servers HOST:PORT[,...] [--topics T | --routes FILE] [--cache-ttl 10m] [--cache-dir DIR] [--kafka-timeout 30s]
        [Kafka connection flags]]
       [--token-file PATH] [--client-credentials-file PATH [--token-ttl 1h]]
       [--https-cert PEM --https-key PEM] [--insecure]

A read-only Iceberg REST catalog over the catalog (GET /v1/config, namespaces, tables; writes refused
with 403). With --live each table carries one extra snapshot holding its Kafka tail, so any engine
reads the merged view.

flags:
${CATALOG_LINE}
  --port P                 the port to listen on
  --host H                 the address to listen on (default 127.0.0.1)
  --live                   add each table's Kafka tail as a snapshot (with the Kafka connection flags)
  --topics T / --routes FILE
                           the topics and route a live table's tail is read and mapped with
  --cache-ttl DURATION     how long a live snapshot is reused (default 10m)
  --kafka-timeout DURATION how long reading a tail may wait on Kafka before the load gets 503 (default 30s)
  --cache-dir DIR          where live files go (default <table location>/floe-live/); engines must read it
  --token-file PATH        every request needs 'Authorization: Bearer <the file's token>' (or FLOE_SERVE_TOKEN);
                           at least 16 characters, never on the command line (--token is refused: ps shows it)
  --client-credentials-file PATH
                           client_id:client_secret lines (or FLOE_SERVE_CLIENT_CREDENTIALS): OAuth2 tokens
                           from POST /v1/oauth/tokens
  --token-ttl DURATION     lifetime of those tokens (default 1h)
  --https-cert PEM --https-key PEM
                           serve HTTPS (--tls-cert/--tls-key are the Kafka client's certificate)
  --insecure               allow a non-loopback --host with neither authentication nor TLS
${KAFKA_CONNECTION_HELP}
example:
  floe serve --warehouse ./warehouse --port 8181
`,
  status: `usage: floe status <catalog> --table NS.NAME [--bootstrap-servers HOST:PORT[,...] [Kafka connection flags]]
       [--topics T1,T2] [--gap-age DURATION] [--dlq-table NS.NAME] [--json]

How far behind its topics the table is, per topic-partition, from its snapshots' committed offsets (of
Kafka only the watermarks and the gaps' offsets are read; no data file is read, nothing commits):
  committed         the offset ranges the table holds (of the current offset epoch)
  log start, high watermark   the broker's, with --bootstrap-servers
  lag               offsets from the later of the log start and the table's first committed offset up
                    to the high watermark that the table does not hold (holes found empty excepted);
                    expired: offsets above the first commit that retention dropped before the table held them
  last advanced     when the table first held the partition's last committed offset (snapshot time)
  newest record     the highest record timestamp of the committed ranges
  gaps              holes between committed ranges and how long each has been open; stale when open at
                    least --gap-age: a batch the event source gave up on (floe redrive-failed closes it)
  dead letters      the dead-letter table counted by stage
Exit 0, or 3 when a stale gap exists.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --topics T1,T2           ask the broker about these topics too (partitions the table never committed)
  --gap-age DURATION       how long a gap may stay open before it is stale (default 15m)
  --dlq-table NS.NAME      the dead-letter table (default NS.NAME__dlq)
  --json                   one JSON object (functions/core/status/README.md)
${KAFKA_CONNECTION_HELP}
example:
  floe status --warehouse ./warehouse --table sales.orders --bootstrap-servers localhost:9092
`,
  verify: `usage: floe verify <catalog> --table NS.NAME [--snapshot ID] [--deep] [--allow-holes] [--dlq-table NS.NAME] [--json]

Audits a snapshot of the table (the current one unless --snapshot): no data or delete file registered
twice, every file (data, delete, manifest, manifest list) present at its recorded size, the manifest
list's counts and the summary's totals true to the manifests. Reads only.
Exit 0: clean; 1: findings (each with what, where and how many) or an error; 2: bad usage.

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --snapshot ID            the snapshot to audit (default the current one)
  --deep                   also read the rows' _kafka topic, partition and offset (deletes applied): no
                           offset held by two live rows, every live row inside the committed offsets,
                           every committed offset held by a live row or a dead letter; keyed tables
                           (debezium, upsert, aggregate results): no key held by two live rows
  --allow-holes            on an append table, committed offsets without a row are notes, not findings
                           (transactions, compacted topics, routes whose "when" sends records elsewhere)
  --dlq-table NS.NAME      the dead-letter table (default NS.NAME__dlq)
  --json                   the whole report as one JSON object
example:
  floe verify --warehouse ./warehouse --table sales.orders --deep
`,
  'kafka-serve': `usage: floe kafka-serve <catalog> --table NS.NAME [--table ...] [--routes FILE] --bootstrap-servers HOST:PORT --port P [--host 127.0.0.1] [--cold-below committed|P:O,...] [--cache-mb 256]
       [--listener-tls-cert FILE --listener-tls-key FILE [--listener-tls-ca FILE --listener-tls-client-auth required]]
       [--listener-sasl-users FILE] [--listener-sasl-mechanisms M,...] [--insecure] [Kafka connection flags]

A Kafka endpoint for unmodified clients (kcat, kafkajs, librdkafka, Java) in front of a real cluster:
fetches of offsets the tables hold are answered from the tables, with each record's original offset,
key, headers and timestamp; everything else (newer offsets, consumer groups, offset commits) goes to
the cluster. Every broker is shown as this one endpoint. Record values are the original bytes where
the table kept them (_kafka.value, a route's kafkaValue), else the rows encoded back as the Confluent
Avro/Protobuf frame of the schema id they kept (_kafka.schema_id, through the registry --routes names),
else the rows (without _kafka) as exact JSON; dead letters (a route's dlqTable with --routes, else
NS.NAME__dlq) are served at their offsets too. Clients authenticate to floe (TLS, SASL);
floe authenticates to the cluster as itself with the Kafka connection flags: the cluster's ACLs apply
to floe's principal.

flags:
${CATALOG_LINE}
  --table NS.NAME          a table to serve (repeatable; each holds its topics, by _kafka.topic)
  --routes FILE            the routes the tables are ingested with: each table's DLQ table (dlqTable)
                           and schema registry (format.registry), to re-encode rows through it
  --port P                 the port to listen on (0 picks a free one)
  --host H                 the address to listen on and to name in Metadata (default 127.0.0.1); one
                           reachable from other machines needs TLS and client authentication, or --insecure
  --cold-below committed   serve from the tables every offset their committed ranges hold (default)
  --cold-below P:O,...     serve from the tables every offset below O of partition P (the cluster's
                           retention stands there); below the tables' first offset is out of range
  --cache-mb N             memory for the cold record batches, built once and shared by every
                           consumer (default 256)
  --listener-tls-cert FILE --listener-tls-key FILE
                           TLS towards clients: this endpoint's certificate and key (PEM)
  --listener-tls-ca FILE --listener-tls-client-auth required
                           clients must present a certificate signed by this CA (PEM)
  --listener-sasl-users FILE
                           SASL towards clients: user:password lines (also FLOE_KAFKA_SERVE_USERS)
  --listener-sasl-mechanisms M,...
                           PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (default all three)
  --insecure               accept a non-loopback --host without TLS and client authentication

${KAFKA_CONNECTION_HELP}
example:
  floe kafka-serve --warehouse ./warehouse --table sales.orders --bootstrap-servers broker:9092 --port 9093
`,
  index: `usage: floe index <catalog> --table NS.NAME [build|rebuild|status|verify] [--json]

The key index of a keyed table (debezium, upsert): NS.NAME__keys, where each key's live row is, which
position-delete batches read instead of scanning the table (functions/core/key-index/README.md).
  build     create the index, or catch it up to the table's current snapshot
  rebuild   rewrite it from a full scan of the table (also compacts its log of entries)
  status    the snapshot it covers and how many snapshots behind the table it is (the default)
  verify    compare it with a full scan; exit 1 naming the first differences

flags:
${CATALOG_LINE}
  --table NS.NAME          the keyed table
  --json                   one JSON object
example:
  floe index --warehouse ./warehouse --table sales.orders_current verify
`,
  'rebase-offsets': `usage: floe rebase-offsets <catalog> --table NS.NAME --topic T [--partitions 0,1,...] [--dlq-table NS.NAME]

Starts a new offset epoch for topic T in the table and in its dead-letter table: the committed offsets
of the current epoch move aside (kept in the snapshot summary as floe.offset-epochs), so the next
batches land as new records. For a topic that was deleted and recreated, a new cluster or a failover,
after floe stopped with "records inside the table's committed offsets are not the records it committed
there". Rows already in the table stay. Run it while nothing ingests the topic, then start ingesting
from where the new history should begin (e.g. floe run --starting-position trim-horizon, a new group).

flags:
${CATALOG_LINE}
  --table NS.NAME          the table
  --topic T                the topic whose history changed
  --partitions 0,1,...     only these partitions (default: all the table holds offsets for)
  --dlq-table NS.NAME      the dead-letter table (default NS.NAME__dlq; skipped when it does not exist)

example:
  floe rebase-offsets --warehouse ./warehouse --table sales.orders --topic orders
`,
};

/** The commands `floe help` knows, in the order `floe --help` lists them. */
export const HELP_COMMANDS = Object.keys(COMMAND_HELP).filter((c) => c !== 'scan-live');

/**
 * The help of `command` given its arguments (`scan ... --live` is scan --live's), or undefined for an
 * unknown command.
 */
export function helpFor(command: string, args: readonly string[] = []): string | undefined {
  if (command === 'scan' && args.includes('--live')) return COMMAND_HELP['scan-live'];
  return Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command] : undefined;
}

/** Whether `command`'s help is followed by the catalog options (every command but demo takes a catalog). */
export function takesCatalog(command: string): boolean {
  return command !== 'demo';
}

/** Whether the arguments ask for help (`--help` or `-h` anywhere before a `--`). */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}
