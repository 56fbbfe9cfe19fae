// Checks IP whitelist and egress entries in the browser, so a typo is pointed out next to the
// field before anything is sent. The server checks again with ipaddr.js and has the last word.

function ipv4Parts(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    // Leading zeros are refused: some parsers read them as octal.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

export function isIPv4(text: string): boolean {
  return ipv4Parts(text) !== null;
}

export function isIPv6(text: string): boolean {
  let s = text;
  // An embedded IPv4 tail (::ffff:192.0.2.1) stands for the last two groups.
  const lastColon = s.lastIndexOf(':');
  if (lastColon >= 0 && s.slice(lastColon + 1).includes('.')) {
    if (!isIPv4(s.slice(lastColon + 1))) return false;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const all = halves.flatMap(groups);
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  // "::" stands for at least one group of zeros.
  return halves.length === 2 ? all.length <= 7 : all.length === 8;
}

/** What is wrong with one entry, in words for the field's error line; null when it is valid. */
export function whitelistEntryError(raw: string): string | null {
  const entry = raw.trim();
  if (entry === '') return 'Enter an IP address or a CIDR range.';
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const v4 = isIPv4(address);
  const v6 = !v4 && isIPv6(address);
  if (!v4 && !v6) {
    return `“${address}” is not an IPv4 or IPv6 address (e.g. 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32).`;
  }
  if (slash < 0) return null;
  const prefix = entry.slice(slash + 1);
  const max = v4 ? 32 : 128;
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix) || Number(prefix) > max) {
    return `In “${entry}”, the prefix length after “/” must be a whole number from 0 to ${max}.`;
  }
  return null;
}
