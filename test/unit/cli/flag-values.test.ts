/**
 * The CLI's one duration reader and one integer reader, and the flags that use them: each flag keeps
 * its syntax, and a bad value is refused with an error naming the flag (exit 2).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backfillConfigFromOptions } from '../../../functions/cli/commands/backfill.js';
import { runConfigFromOptions } from '../../../functions/cli/commands/run.js';
import { parseDuration, parseInteger } from '../../../functions/cli/flag-values.js';
import { parseKafkaArgs } from '../../../functions/cli/kafka-options.js';
import { main } from '../../../functions/cli/main.js';
import { UsageError } from '../../../functions/cli/options.js';
import { ESM_MAX_BATCH_SIZE } from '../../../functions/core/kafka/esm-batch.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['500ms', 500],
    ['90s', 90_000],
    ['1.5m', 90_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['3d', 259_200_000],
    ['2w', 1_209_600_000],
    [' 6h ', 21_600_000],
  ])('reads %j', (text, ms) => {
    expect(parseDuration(text, '--older-than')).toBe(ms);
  });

  it.each(['soon', '10', '', '-1s', '1y', '1.m', 'h'])('refuses %j, naming the flag', (text) => {
    expect(() => parseDuration(text, '--cache-ttl')).toThrow(UsageError);
    expect(() => parseDuration(text, '--cache-ttl')).toThrow(
      `--cache-ttl must be a duration like 90s, 30m, 6h or 3d (units ms, s, m, h, d, w), got '${text}'`,
    );
  });
});

describe('parseInteger', () => {
  it('reads decimal digits within the bounds', () => {
    expect(parseInteger('0', '--n', 0, 5)).toBe(0);
    expect(parseInteger('5', '--n', 0, 5)).toBe(5);
    expect(parseInteger('007', '--n', 1)).toBe(7);
  });

  it.each(['1.5', '1e3', '-1', ' 2', '', '0x10', '9007199254740993'])('refuses %j', (text) => {
    expect(() => parseInteger(text, '--n', 0, 100)).toThrow(
      `--n must be an integer from 0 to 100, got '${text}'`,
    );
  });

  it('says the range, open above when there is no maximum', () => {
    expect(() => parseInteger('6', '--n', 0, 5)).toThrow("--n must be an integer from 0 to 5, got '6'");
    expect(() => parseInteger('0', '--n', 1)).toThrow("--n must be an integer of at least 1, got '0'");
  });
});

describe('the batch size of floe run and floe backfill', () => {
  const base = ['--bootstrap-servers', 'b:9092', '--warehouse', 'wh', '--table', 'ns.t'];

  it("is bounded by the ESM's limit", () => {
    const at = String(ESM_MAX_BATCH_SIZE);
    const past = String(ESM_MAX_BATCH_SIZE + 1);
    const run = (size: string) =>
      runConfigFromOptions(parseKafkaArgs([...base, '--topics', 'a', '--batch-size', size], 'run'), {});
    const backfill = (size: string) =>
      backfillConfigFromOptions(parseKafkaArgs([...base, '--topic', 'a', '--batch-size', size], 'backfill'));
    expect(run(at).batchSize).toBe(ESM_MAX_BATCH_SIZE);
    expect(backfill(at).batchSize).toBe(ESM_MAX_BATCH_SIZE);
    expect(() => run(past)).toThrow(`--batch-size must be an integer from 1 to ${ESM_MAX_BATCH_SIZE}`);
    expect(() => backfill(past)).toThrow(`--batch-size must be an integer from 1 to ${ESM_MAX_BATCH_SIZE}`);
  });
});

describe('bad numeric flags on the command line', () => {
  let err = '';
  beforeEach(() => {
    err = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    [
      ['maintain', 'all', '--table', 'a.b', '--older-than', '3 days'],
      "--older-than must be a duration like 90s, 30m, 6h or 3d (units ms, s, m, h, d, w), got '3 days'",
    ],
    [
      ['maintain', 'expire-snapshots', '--table', 'a.b', '--retain-last', '0'],
      "--retain-last must be an integer of at least 1, got '0'",
    ],
    [
      ['maintain', 'expire-snapshots', '--table', 'a.b', '--retain-last', '2.5'],
      "--retain-last must be an integer of at least 1, got '2.5'",
    ],
    [
      [
        'replay',
        '--bootstrap-servers',
        'b:9092',
        '--table',
        'a.b',
        '--to-topic',
        't',
        '--batch-size',
        '10001',
      ],
      "--batch-size must be an integer from 1 to 10000, got '10001'",
    ],
    [
      ['run', '--bootstrap-servers', 'b:9092', '--topics', 'a', '--session-timeout-ms', '999'],
      "--session-timeout-ms must be an integer from 1000 to 3600000, got '999'",
    ],
    [
      ['serve', '--port', '0', '--live', '--bootstrap-servers', 'b:9092', '--cache-ttl', 'an hour'],
      "--cache-ttl must be a duration like 90s, 30m, 6h or 3d (units ms, s, m, h, d, w), got 'an hour'",
    ],
    [
      ['serve', '--port', '0', '--live', '--bootstrap-servers', 'b:9092', '--kafka-timeout', '0'],
      "--kafka-timeout must be longer than 0, got '0'",
    ],
    [
      ['scan', '--table', 'a.b', '--live', '--bootstrap-servers', 'b:9092', '--kafka-timeout', 'soon'],
      "--kafka-timeout must be a duration like 90s, 30m, 6h or 3d (units ms, s, m, h, d, w), got 'soon'",
    ],
  ])('%j exits 2 naming the flag', async (argv, message) => {
    // Act
    const code = await main(argv);
    // Assess
    expect(code).toBe(2);
    expect(err).toContain(message);
  });
});
