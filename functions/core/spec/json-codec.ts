/**
 * Lossless JSON for Iceberg metadata and REST payloads. Iceberg Java draws snapshot ids from 63
 * random bits; JSON.parse would round them to doubles and a rounded id written back corrupts the
 * table's lineage. Integers beyond 2^53 therefore parse as `bigint` (through the reviver's
 * source-text access, Node ≥ 21) and every `bigint` serialises as an exact JSON number
 * (`JSON.rawJSON`, Node ≥ 21).
 */

interface RawJsonApi {
  rawJSON(text: string): unknown;
}

const rawJSON = (JSON as unknown as RawJsonApi).rawJSON;

/** JSON.parse, with integers beyond 2^53 as exact bigints. @throws SyntaxError */
export function parseJsonLossless(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^-?\d+$/.test(context.source)
      ? BigInt(context.source)
      : value,
  );
}

/** JSON.stringify writing bigints as exact JSON numbers. */
export function stringifyJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v), space);
}
