import { describe, expect, it } from 'vitest';
import {
  describeKey,
  keyFromJson,
  keyFromKafkaKey,
  keyFromRow,
} from '../../../functions/core/cdc/record-key.js';
import type { KeyColumn } from '../../../functions/core/routing/table-mode.js';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { ID_KEY } from './cdc-fixtures.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const COMPOSITE: KeyColumn[] = [
  { id: 1, name: 'tenant', path: ['tenant'], type: 'string' },
  { id: 2, name: 'pk.n', path: ['pk', 'n'], type: 'int' },
];
const SKU: KeyColumn[] = [{ id: 1, name: 'sku', path: ['sku'], type: 'string' }];

describe('keys of changes', () => {
  it('reads JSON object keys, bare or in a { schema, payload } envelope, nested columns too', () => {
    // Act
    const plain = keyFromKafkaKey(bytes('{"id": 42}'), ID_KEY);
    const wrapped = keyFromKafkaKey(bytes('{"schema": {"type": "struct"}, "payload": {"id": 42}}'), ID_KEY);
    const composite = keyFromKafkaKey(bytes('{"tenant": "t1", "pk": {"n": 7}}'), COMPOSITE);

    // Assess
    expect(plain.values).toEqual([42n]);
    expect(wrapped.text).toBe(plain.text);
    expect(composite.values).toEqual(['t1', 7]);
    expect(describeKey(COMPOSITE, composite)).toBe('tenant=t1, pk.n=7');
  });

  it('reads primitive and plain-text keys for a single column', () => {
    expect(keyFromKafkaKey(bytes('1000'), ID_KEY).values).toEqual([1000n]);
    expect(keyFromKafkaKey(bytes('"1000"'), ID_KEY).values).toEqual([1000n]);
    expect(keyFromKafkaKey(bytes('12345678901234567890'.slice(0, 19)), ID_KEY).values).toEqual([
      1234567890123456789n,
    ]);
    expect(keyFromKafkaKey(bytes('SKU-1'), SKU).values).toEqual(['SKU-1']);
    // A string column keeps the key's text even when it parses as a JSON number.
    expect(keyFromKafkaKey(bytes('007'), SKU).values).toEqual(['007']);
    expect(keyFromKafkaKey(bytes('"quoted"'), SKU).values).toEqual(['quoted']);
  });

  it('refuses keys that do not give every key column', () => {
    const refuse = (key: string, columns: KeyColumn[]) =>
      expect(() => keyFromKafkaKey(bytes(key), columns)).toThrow(RecordDecodeError);
    refuse('{"other": 1}', ID_KEY);
    refuse('{"id": null}', ID_KEY);
    refuse('"t1"', COMPOSITE);
    refuse('not json', ID_KEY);
    refuse('[1]', ID_KEY);
    refuse('{"id": "x"}', ID_KEY);
    expect(() => keyFromKafkaKey(bytes('{"tenant": "t1"}'), COMPOSITE)).toThrow(/no usable key/);
  });

  it('takes keys from rows and row images; equal values give equal key texts', () => {
    const fromRow = keyFromRow({ id: 5n, name: 'x' }, ID_KEY);
    const fromJson = keyFromJson({ id: 5, name: 'y' }, ID_KEY, 'before');
    expect(fromJson?.text).toBe(fromRow.text);
    expect(keyFromJson({ name: 'no id' }, ID_KEY, 'before')).toBeUndefined();
    expect(() => keyFromRow({ id: null }, ID_KEY)).toThrow(/no usable key: key column 'id' is null/);
  });
});
