// A segment holds the small inputs of one group of submits in one object
// (packages/storage's input-segments.ts). Its name is what a row's tensor
// names (`segment`): the group's first and last job ids, UUIDv7s in time
// order, as 32 hex digits each. The ids bound the rows that may name it (a
// purge probes them by primary key: packages/db), and the first one's time
// files the object under its day (packages/storage's inputSegmentKey).

const NAME = /^([0-9a-f]{32})\.([0-9a-f]{32})$/;

const hexOf = (id: string): string => id.replaceAll('-', '').toLowerCase();
const uuidOf = (hex: string): string => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** The name of the segment of a group whose first and last job ids (by time) these are. */
export const inputSegmentName = (firstJobId: string, lastJobId: string): string => `${hexOf(firstJobId)}.${hexOf(lastJobId)}`;

/** The first and last job ids a segment's name holds; undefined for text that is no segment's name. */
export function inputSegmentJobIds(name: string): { first: string; last: string } | undefined {
  const m = NAME.exec(name);
  return m ? { first: uuidOf(m[1]!), last: uuidOf(m[2]!) } : undefined;
}
