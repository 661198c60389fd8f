import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * moto's UpdateItem reads the item, checks the condition and writes without a lock, so two requests in
 * flight at the same moment can both pass one condition; real DynamoDB serialises writes to an item.
 * This client sends one request at a time, which gives moto DynamoDB's per-item linearizability while
 * writers sharing it still interleave freely between requests. Share one wrapped client among every lock
 * of a test: the queue is per wrapped client.
 */
export function oneRequestAtATime(client: DynamoDBClient): DynamoDBClient {
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  let tail: Promise<unknown> = Promise.resolve();
  const serialised = Object.create(client) as DynamoDBClient;
  serialised.send = ((...args: unknown[]) => {
    const run = tail.then(() => send(...args));
    tail = run.catch(() => undefined);
    return run;
  }) as DynamoDBClient['send'];
  return serialised;
}
