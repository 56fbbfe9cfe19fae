import { describe, expect, it } from 'vitest';

import { egressDenial, egressUnreachable } from '../../server/egress/proxy-markers.js';

describe('egress proxy markers', () => {
  it("reads the proxy's reason from a plain-HTTP response", () => {
    expect(egressDenial('http://a.test/x.png', { 'x-egress-denied': '127.0.0.2 is a loopback address' })).toBe(
      '127.0.0.2 is a loopback address',
    );
    expect(egressDenial('HTTP://a.test/', { 'x-egress-denied': ' ' })).toBe('denied');
    expect(egressDenial('http://a.test/', { 'content-type': 'text/html' })).toBeNull();
  });

  it('reads the errno code of a target the proxy could not reach', () => {
    expect(egressUnreachable('http://a.test/', { 'x-egress-unreachable': 'ECONNREFUSED' })).toBe('ECONNREFUSED');
    expect(egressUnreachable('http://a.test/', {})).toBeNull();
  });

  it('ignores the header on an https response: it came through a tunnel the proxy cannot write into, so from the page', () => {
    expect(egressDenial('https://a.test/', { 'x-egress-denied': 'fake' })).toBeNull();
    expect(egressDenial('wss://a.test/', { 'x-egress-denied': 'fake' })).toBeNull();
    expect(egressUnreachable('https://a.test/', { 'x-egress-unreachable': 'ECONNREFUSED' })).toBeNull();
  });
});
