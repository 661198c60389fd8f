/**
 * What `floe verify` reports: findings (the table is not what floe promises: exit 1) and notes (what
 * the audit could not decide or chose not to count, said so the reader knows the limits of a pass).
 */

/** The checks, by the name a finding carries. */
export type CheckName =
  | 'duplicate-file'
  | 'missing-file'
  | 'file-size'
  | 'summary-total'
  | 'manifest-counts'
  | 'summary-offsets'
  | 'duplicate-offset'
  | 'uncommitted-row'
  | 'missing-offsets'
  | 'uncovered-range'
  | 'duplicate-key';

/** One way the table differs from what floe promises. */
export interface Finding {
  check: CheckName;
  /** What is wrong, in a sentence. */
  what: string;
  /** Where: a file path, a topic/partition and offsets, a summary key, a key value. */
  where: string;
  /** How many files, rows or offsets. */
  count: bigint;
}

/** What a verify run checked and found. */
export interface VerifyReport {
  table: string;
  /** The snapshot checked; null for a table without snapshots. */
  snapshotId: bigint | null;
  deep: boolean;
  findings: Finding[];
  /** What was not checked, or was counted but is not a finding (see functions/core/verify/README.md). */
  notes: string[];
  /** What was looked at: files stat'ed, manifests read, rows read, key passes. */
  counts: Record<string, bigint>;
}

/** Findings are many when a table is badly damaged: each check lists this many places, then a tally. */
export const MAX_LISTED = 20;

/**
 * Collects findings per check, capping how many places each check lists (the rest are summed into one
 * "and N more" finding), so a table with a million duplicated rows reports in bounded memory.
 */
export class FindingList {
  private readonly listed = new Map<CheckName, number>();
  private readonly overflow = new Map<CheckName, { places: number; count: bigint }>();
  readonly findings: Finding[] = [];

  add(finding: Finding): void {
    const n = this.listed.get(finding.check) ?? 0;
    if (n < MAX_LISTED) {
      this.listed.set(finding.check, n + 1);
      this.findings.push(finding);
      return;
    }
    const more = this.overflow.get(finding.check) ?? { places: 0, count: 0n };
    more.places++;
    more.count += finding.count;
    this.overflow.set(finding.check, more);
  }

  /** The findings, each check's overflow last as one finding. Never throws. */
  all(): Finding[] {
    const out = [...this.findings];
    for (const [check, more] of this.overflow) {
      out.push({
        check,
        what: `${more.places} more place(s) of the same kind (not listed)`,
        where: '…',
        count: more.count,
      });
    }
    return out;
  }
}
