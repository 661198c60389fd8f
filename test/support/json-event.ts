/** MSK ESM events of JSON values for tests, framed as Lambda delivers them (base64 key and value). */

export interface JsonEventOptions {
  partition?: number;
  firstOffset?: number;
  /** The Kafka key's text of value i (none when it answers undefined). */
  key?: (value: unknown, index: number) => string | undefined;
}

/**
 * An event of `values` on one partition of `topic`: each value as its JSON (a string is the value's
 * JSON text itself, for texts JSON.stringify cannot write), null as a tombstone.
 */
export function jsonEvent(
  topic: string,
  values: readonly unknown[],
  options: JsonEventOptions = {},
): unknown {
  const partition = options.partition ?? 0;
  return {
    eventSource: 'aws:kafka',
    records: {
      [`${topic}-${partition}`]: values.map((v, i) => {
        const key = options.key?.(v, i);
        return {
          topic,
          partition,
          offset: (options.firstOffset ?? 0) + i,
          timestamp: 1_795_000_000_000 + i,
          timestampType: 'CREATE_TIME',
          ...(key === undefined ? {} : { key: Buffer.from(key).toString('base64') }),
          value:
            v === null ? null : Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64'),
          headers: [],
        };
      }),
    },
  };
}
