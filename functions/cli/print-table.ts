import { stringifyJson } from '../core/spec/json-codec.js';

/** Prints rows as an aligned text table; nested values as compact JSON (64-bit integers exact), long cells cut. */
export function printTable(rows: Record<string, unknown>[], maxWidth = 28): void {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const cell = (v: unknown): string => {
    const text = v === null || v === undefined ? '' : typeof v === 'object' ? stringifyJson(v) : String(v);
    return text.length > maxWidth ? `${text.slice(0, maxWidth - 1)}…` : text;
  };
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (parts: string[]) =>
    parts
      .map((p, i) => p.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  process.stdout.write(`${line(columns)}\n${widths.map((w) => '-'.repeat(w)).join('-+-')}\n`);
  for (const r of cells) process.stdout.write(`${line(r)}\n`);
}
