import { describe, expect, it } from 'vitest';

import { whitelistEntryError } from '../../renderer/src/ip-whitelist.js';
import { inRange, parseAddress, parseRange, rangeText } from '../../server/ip-ranges.js';

/** Entries and the range the server keeps of each (null: refused by the server and the panel). */
const VARIANTS: Array<[string, string | null]> = [
  // IPv4
  ['192.0.2.7', '192.0.2.7'],
  ['10.0.0.0/8', '10.0.0.0/8'],
  ['10.1.2.3/8', '10.0.0.0/8'],
  ['0.0.0.0/0', '0.0.0.0/0'],
  ['10.0.0', null],
  ['010.0.0.1', null],
  ['0x7f.0.0.1', null],
  ['10.0.0.256', null],
  // IPv6
  ['2001:db8::1', '2001:db8::1'],
  ['2001:DB8::/32', '2001:db8::/32'],
  ['2001:0db8:0000:0000:0000:ff00:0042:8329', '2001:db8::ff00:42:8329'],
  ['::/0', '::/0'],
  ['fe80::1%eth0', 'fe80::1'],
  ['[::1]', '::1'],
  ['1::2::3', null],
  ['12345::', null],
  // IPv4-mapped IPv6: kept as IPv4, so IPv4 callers match
  ['::ffff:192.0.2.1', '192.0.2.1'],
  ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
  ['::ffff:300.0.0.1', null],
  // prefixes
  ['10.0.0.0/32', '10.0.0.0'],
  ['10.0.0.0/33', null],
  ['2001:db8::/128', '2001:db8::'],
  ['2001:db8::/129', null],
  ['10.0.0.0/', null],
  ['10.0.0.0/08', null],
  ['10.0.0.0/8/8', null],
  ['10.0.0.0/-1', null],
  ['10.0.0.0/x', null],
  // spaces: around the entry ignored, inside refused
  ['  10.0.0.0/8  ', '10.0.0.0/8'],
  ['10.0.0.0 /8', null],
  ['10.0.0.0/ 8', null],
  ['2001:db8:: 1', null],
];

describe('IP ranges, as the server and the control panel read them', () => {
  it.each(VARIANTS)('reads %j as %s', (entry, kept) => {
    const range = parseRange(entry);
    expect(range && rangeText(range)).toBe(kept);
  });

  it.each(VARIANTS)('the panel agrees on %j', (entry, kept) => {
    expect(whitelistEntryError(entry) === null).toBe(kept !== null);
  });

  it('matches a mapped client address against an IPv4 range and never across families', () => {
    const mappedRange = parseRange('::ffff:10.0.0.0/104')!;
    expect(inRange(parseAddress('10.9.8.7')!, mappedRange)).toBe(true);
    expect(inRange(parseAddress('::ffff:10.9.8.7')!, parseRange('10.0.0.0/8')!)).toBe(true);
    expect(inRange(parseAddress('11.0.0.1')!, mappedRange)).toBe(false);
    expect(inRange(parseAddress('::1')!, parseRange('0.0.0.0/0')!)).toBe(false);
  });
});
