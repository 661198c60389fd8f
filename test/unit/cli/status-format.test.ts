import { describe, expect, it } from 'vitest';
import { formatAge } from '../../../functions/cli/commands/status.js';

describe("floe status's ages", () => {
  it('shows the two largest units, dropping a zero second unit', () => {
    expect(formatAge(800)).toBe('800ms');
    expect(formatAge(65_000)).toBe('1m 5s');
    expect(formatAge(3 * 86_400_000 + 4 * 3_600_000 + 59_000)).toBe('3d 4h');
    expect(formatAge(2 * 3_600_000 + 30_000)).toBe('2h');
    expect(formatAge(-5)).toBe('0ms');
  });
});
