/**
 * A producer for floe's own output topics (an aggregate table's emitted windows): string keys and
 * values, one request in flight and acks from all in-sync replicas, so the messages of one send are
 * never reordered or lost once it resolves. Callers outside kafka/ get this interface, not the client.
 */
import { createKafka, type KafkaConnectionOptions } from './kafka-client.js';

export interface MessageProducer {
  /**
   * Sends the messages to `topic` in order and resolves once every in-sync replica has them.
   * @throws Error from the Kafka client when producing fails (retrying may help)
   */
  send(topic: string, messages: { key: string; value: string }[]): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * A connected producer for the brokers (topics it sends to are created where the broker allows it).
 * @throws as createKafka; Error from the Kafka client when the brokers cannot be reached
 */
export async function connectMessageProducer(options: KafkaConnectionOptions): Promise<MessageProducer> {
  const kafka = await createKafka(options);
  const producer = kafka.producer({ allowAutoTopicCreation: true, maxInFlightRequests: 1 });
  await producer.connect();
  return {
    async send(topic, messages) {
      await producer.send({ topic, acks: -1, messages });
    },
    disconnect: () => producer.disconnect(),
  };
}
