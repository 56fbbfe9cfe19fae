/** The `reason` label of an egress denial: a fixed list, where the denial's text names addresses. */
export type EgressReasonLabel = 'loopback' | 'link_local' | 'lan' | 'own_port' | 'special' | 'scheme' | 'invalid' | 'other';

/**
 * Reads the kind of range out of an egress denial's reason (EgressDeniedError.reason, as the
 * proxy logs it). The reason is a sentence naming the address and the range's phrase from the
 * policy's tables; the label keeps only the range, so the series stay few whatever is denied.
 * test/ops/metrics-labels.test.ts feeds it the policy's real denials, so a change of wording
 * there fails a test instead of landing in `other`.
 */
export function egressReasonLabel(reason: string): EgressReasonLabel {
  if (reason.includes('belongs to this service')) return 'own_port';
  if (reason.includes('a loopback address')) return 'loopback';
  if (reason.includes('a link-local address')) return 'link_local';
  if (/\((LAN|carrier-grade NAT)\) address/.test(reason)) return 'lan';
  if (/an? (unspecified|broadcast|multicast|reserved|site-local|discard-only) address/.test(reason)) return 'special';
  if (reason.startsWith('only http and https')) return 'scheme';
  if (reason.includes('not a valid URL') || reason.includes('not an IP address')) return 'invalid';
  return 'other';
}
