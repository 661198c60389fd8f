/**
 * Canonical base64 decoded in JS, for short texts (keys, most often): a call into Node's native decoder
 * costs ~80 ns whatever the length, this loop ~1.5 ns a character, so below ~60 characters it is the
 * faster. It takes exactly the texts esm-columns.ts' native fast path takes, with the same bytes:
 * a length that is a multiple of 4, every character before the 0–2 closing `=` in one of the two
 * alphabets (`+/` or `-_`, never both), trailing bits ignored as Node ignores them. Anything else
 * answers -1 and the caller takes its careful path, as when the native decode comes out short.
 */

/** Texts up to this length are decoded here rather than natively. */
export const SHORT_BASE64 = 48;

const STANDARD = 0x100;
const URL_SAFE = 0x200;

/** Each ASCII character's 6 bits, with STANDARD or URL_SAFE for the characters only one alphabet has; -1 outside both. */
const SEXTETS = (() => {
  const table = new Int16Array(128).fill(-1);
  const common = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < common.length; i++) table[common.charCodeAt(i)] = i;
  table[0x2b] = 62 | STANDARD; // +
  table[0x2f] = 63 | STANDARD; // /
  table[0x2d] = 62 | URL_SAFE; // -
  table[0x5f] = 63 | URL_SAFE; // _
  return table;
})();

/** A character's entry in SEXTETS; -1 for one past ASCII. */
function sextet(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c < 128 ? SEXTETS[c] : -1;
}

/**
 * Decodes canonical base64 `text` (of at most SHORT_BASE64 characters, though any length works) into
 * out[at..]; the number of bytes written, or -1 when the text is not canonical base64 of one alphabet
 * (out may then hold a part of it). `out` must have room for length / 4 * 3 bytes at `at`.
 */
export function decodeShortBase64(text: string, out: Uint8Array, at: number): number {
  const len = text.length;
  if (len === 0) return 0;
  if ((len & 3) !== 0) return -1;
  const pad = text.charCodeAt(len - 1) !== 0x3d ? 0 : text.charCodeAt(len - 2) === 0x3d ? 2 : 1;
  const last = len - 4;
  let seen = 0;
  let k = at;
  for (let q = 0; q < last; q += 4) {
    const a = sextet(text, q);
    const b = sextet(text, q + 1);
    const c = sextet(text, q + 2);
    const d = sextet(text, q + 3);
    if ((a | b | c | d) < 0) return -1;
    seen |= a | b | c | d;
    out[k] = ((a & 63) << 2) | ((b & 63) >> 4);
    out[k + 1] = ((b & 15) << 4) | ((c & 63) >> 2);
    out[k + 2] = ((c & 3) << 6) | (d & 63);
    k += 3;
  }
  const a = sextet(text, last);
  const b = sextet(text, last + 1);
  const c = pad === 2 ? 0 : sextet(text, last + 2);
  const d = pad > 0 ? 0 : sextet(text, last + 3);
  if ((a | b | c | d) < 0) return -1;
  seen |= a | b | c | d;
  if ((seen & (STANDARD | URL_SAFE)) === (STANDARD | URL_SAFE)) return -1;
  out[k++] = ((a & 63) << 2) | ((b & 63) >> 4);
  if (pad < 2) out[k++] = ((b & 15) << 4) | ((c & 63) >> 2);
  if (pad === 0) out[k++] = ((c & 3) << 6) | (d & 63);
  return k - at;
}
