/**
 * A route's `when`: the records it takes, for both ingest paths (append and CDC). A record that no
 * route of its topic takes is dead-lettered by the first of those routes, so it is kept exactly once.
 */
import type { DeadLetter } from '../records/dead-letters.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import { routeMatches } from '../mapping/route-condition.js';
import { routesForTopic, type TableRoute } from './routes.js';

export function selectForRoute(
  route: TableRoute,
  allRoutes: readonly TableRoute[],
  decoded: DecodedRecord[],
): { mine: DecodedRecord[]; unrouted: DeadLetter[] } {
  if (!route.when) return { mine: decoded, unrouted: [] };
  const mine: DecodedRecord[] = [];
  const unrouted: DeadLetter[] = [];
  for (const d of decoded) {
    if (routeMatches(route.when, d)) {
      mine.push(d);
      continue;
    }
    const siblings = routesForTopic(allRoutes, d.record.topic);
    if (siblings[0] === route && !siblings.some((r) => routeMatches(r.when, d))) {
      const why =
        d.record.value === null
          ? ': a tombstone (null value) has no fields to match, only headers (route deletes by a header condition)'
          : '';
      unrouted.push({
        record: d.record,
        stage: 'map',
        error: `no table route's condition matches this record (topic ${d.record.topic})${why}`,
      });
    }
  }
  return { mine, unrouted };
}
