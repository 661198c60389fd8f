/**
 * First-fit decreasing bin packing: the biggest items first, each into the first bin with room. Few bins,
 * each close to full, so one partition's small files become as few rewrite groups as the group limit allows
 * (and therefore as few files below the target as possible: at most one per group).
 */

/**
 * Packs items into bins of at most `capacity` (an item bigger than the capacity gets a bin of its own).
 * Bins come out fullest first; items inside a bin keep the decreasing-size order. Never throws.
 */
export function binPack<T>(items: readonly T[], size: (item: T) => number, capacity: number): T[][] {
  const sorted = [...items].sort((a, b) => size(b) - size(a));
  const bins: { items: T[]; used: number }[] = [];
  for (const item of sorted) {
    const s = size(item);
    const bin = bins.find((b) => b.used + s <= capacity);
    if (bin) {
      bin.items.push(item);
      bin.used += s;
    } else {
      bins.push({ items: [item], used: s });
    }
  }
  return bins.sort((a, b) => b.used - a.used).map((b) => b.items);
}
