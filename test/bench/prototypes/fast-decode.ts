/**
 * PROTOTYPE (bench only, not used by floe): cheaper versions of the per-record decode steps in
 * functions/core/ingest/esm-event.ts and parse-json.ts, to measure what changing them would gain.
 * hot-paths.ts checks they give the same results as the current code.
 */
import { decodeBase64 } from '../../../functions/core/ingest/esm-event.js';
import type { KafkaHeader } from '../../../functions/core/ingest/esm-event.js';
import { parseJsonBytes } from '../../../functions/core/ingest/parse-json.js';

/**
 * Canonical base64 (what producers and the ESM send) decoded with one native call: Node's decoder
 * skips or stops at characters outside the alphabets, so a decode of exactly `len / 4 * 3 - padding`
 * bytes from a `len % 4 === 0` text used only alphabet characters. Anything else (whitespace, missing
 * padding, garbage, mixed alphabets) takes the current strict path, so errors stay what they are.
 */
export function decodeBase64Fast(text: string, what: string): Uint8Array {
  const len = text.length;
  if (len % 4 === 0) {
    const pad = len === 0 ? 0 : text.charCodeAt(len - 1) !== 61 ? 0 : text.charCodeAt(len - 2) === 61 ? 2 : 1;
    const buf = Buffer.from(text, 'base64');
    if (buf.byteLength === (len / 4) * 3 - pad && !hasBothAlphabets(text)) {
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    }
  }
  return decodeBase64(text, what);
}

/** The strict path refuses a text mixing `+/` with `-_`; so must the fast one. */
function hasBothAlphabets(text: string): boolean {
  const standard = text.indexOf('+') >= 0 || text.indexOf('/') >= 0;
  return standard && (text.indexOf('-') >= 0 || text.indexOf('_') >= 0);
}

/**
 * Headers in one pass: the current code walks each byte array twice (`every`, then `Uint8Array.from`
 * with a mapping function). Returns undefined where the current code would throw (caller falls back).
 */
export function decodeHeaderBytes(value: unknown[]): Uint8Array | undefined {
  const out = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const b = value[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < -128 || b > 255) return undefined;
    out[i] = b & 0xff;
  }
  return out;
}

/** decodeHeaders with the one-pass byte copy. */
export function decodeHeadersFast(raw: unknown): KafkaHeader[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new Error('headers must be an array');
  const out: KafkaHeader[] = [];
  for (const h of raw) {
    if (h === null || typeof h !== 'object' || Array.isArray(h)) throw new Error('bad header');
    for (const key in h as Record<string, unknown>) {
      const value = (h as Record<string, unknown>)[key];
      if (value === null) {
        out.push({ key, value: new Uint8Array(0) });
        continue;
      }
      const bytes = Array.isArray(value) ? decodeHeaderBytes(value) : undefined;
      if (!bytes) throw new Error(`header '${key}' is not an array of bytes`);
      out.push({ key, value: bytes });
    }
  }
  return out;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * True when the text holds a run of 16+ characters of number syntax — a superset of what
 * parse-json.ts's `/[\d.][\d.eE+-]{15,}/` finds, in one linear pass (the regex retries from every digit).
 */
export function hasLongNumberRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // 0-9 . e E + -
    if ((c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45) {
      if (++run >= 16) return true;
    } else run = 0;
  }
  return false;
}

/** parseJsonBytes with the linear scan; the rare long-number text goes through the current code. */
export function parseJsonBytesFast(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return parseJsonBytes(bytes);
  }
  if (hasLongNumberRun(text)) return parseJsonBytes(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return parseJsonBytes(bytes);
  }
}
